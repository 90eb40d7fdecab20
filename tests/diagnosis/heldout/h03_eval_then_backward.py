# expect: no-grad-fn-no-grad-block
# ruff: noqa  (a learner's program, mistakes included)
import torch

a = torch.randn(3, requires_grad=True)
b = torch.randn(3)
with torch.no_grad():
    dot = torch.dot(a, b)
    result = dot * 2
result.backward()
