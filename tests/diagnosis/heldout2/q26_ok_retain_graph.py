# expect: none
# ruff: noqa
import torch

torch.manual_seed(0)
x = torch.randn(6, 3)
W = torch.randn(3, 2, requires_grad=True)

z = torch.tanh(x @ W)
loss_small = z.abs().mean()
loss_big = z.pow(2).sum()

# first loss keeps the graph alive for the second one
loss_small.backward(retain_graph=True)
g_small = W.grad.clone()
W.grad.zero_()
loss_big.backward()
g_big = W.grad.clone()

print("cosine:", torch.nn.functional.cosine_similarity(g_small.flatten(), g_big.flatten(), dim=0).item())
