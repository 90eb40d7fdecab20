import torch

x = torch.tensor([2., 1.], requires_grad=True)
y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
z = torch.mm(x.view(1, 2), y)
z[0, 0].backward()
x.grad.copy_(torch.tensor([1., 3.]))
