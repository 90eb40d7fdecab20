import torch as T

x = T.ones(2, requires_grad=True)
loss = T.sum(x + 2)
loss.backward()
