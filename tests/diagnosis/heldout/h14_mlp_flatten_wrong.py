# expect: linear-in-features
# ruff: noqa  (a learner's program, mistakes included)
import torch
import torch.nn as nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 * 16 * 16, 10)

    def forward(self, imgs):
        feats = torch.relu(self.body(imgs))
        feats = feats.flatten(1)
        return self.head(feats)

net = Classifier()
print(net(torch.randn(2, 3, 32, 32)).shape)
