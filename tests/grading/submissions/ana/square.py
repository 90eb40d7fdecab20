import torch


def grad_of_square(t):
    leaf = t.detach().clone().requires_grad_(True)
    (leaf ** 2).sum().backward()
    return leaf.grad
