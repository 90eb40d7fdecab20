# expect: scheduler-get-lr-outside-step
# ruff: noqa  (a learner's program, mistakes included)
import torch

w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(4):
    opt.zero_grad()
    (w - 1).pow(2).sum().backward()
    opt.step()
    sched.step()
    print(epoch, sched.get_lr())
