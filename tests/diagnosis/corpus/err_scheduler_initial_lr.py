# expect: scheduler-resume-initial-lr
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
start_epoch = 5  # resuming
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, last_epoch=start_epoch - 1)
print(sched.get_last_lr())
