# expect: non-scalar-backward
# ruff: noqa
import torch
import torch.nn as nn


class TinyClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.body(x)


net = TinyClassifier()
batch = torch.randn(5, 4)
labels = torch.tensor([0, 2, 1, 1, 0])

logits = net(batch)
loss_fn = nn.CrossEntropyLoss(reduction="none")
losses = loss_fn(logits, labels)
print("losses:", losses)
losses.backward()
print(net.body[0].weight.grad.shape)
