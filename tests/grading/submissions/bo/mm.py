from torch import mm, tensor

x = tensor([2., 1.], requires_grad=True)
y = tensor([[1., 2.], [3., 4.]], requires_grad=True)
z = mm(x.view(1, 2), y)
z[0, 0].backward()
