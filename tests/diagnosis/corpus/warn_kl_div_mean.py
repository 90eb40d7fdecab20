# expect: kl-div-mean-reduction
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn.functional as F

student = torch.randn(8, 10, requires_grad=True)
teacher = torch.softmax(torch.randn(8, 10), dim=1)
loss = F.kl_div(F.log_softmax(student, dim=1), teacher)
loss.backward()
print(loss.item())
