import torch

# the seed's printout: x.grad shown as [[1., 3.]] -- a (1, 2) leaf gives exactly that
x = torch.tensor([[2., 1.]], requires_grad=True)
y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
z = torch.mm(x, y)
z[0, 0].backward()
