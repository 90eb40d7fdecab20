# expect: inplace-modified-output
import torch

x = torch.randn(5, requires_grad=True)
y = torch.tanh(x)
y.relu_()
y.sum().backward()
