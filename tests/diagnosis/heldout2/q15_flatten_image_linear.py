# expect: linear-in-features
# ruff: noqa
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, img):
        flat = img.view(img.size(0), -1)
        return self.fc2(torch.relu(self.fc1(flat)))


imgs = torch.rand(16, 3, 28, 28)   # colour images
labels = torch.randint(0, 10, (16,))
mlp = MLP()
out = mlp(imgs)
loss = nn.functional.cross_entropy(out, labels)
loss.backward()
print(loss.item())
