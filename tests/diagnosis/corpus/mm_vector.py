# expect: mm-needs-matrix
import torch

row = torch.tensor([1.0, 2.0])
M = torch.eye(2, requires_grad=True)
out = torch.mm(row, M)
