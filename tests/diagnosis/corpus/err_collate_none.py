# expect: collate-none-item
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, test=False):
        self.x = torch.randn(8, 3)
        self.test = test

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        label = None if self.test else i % 2
        return self.x[i], label


for x, y in DataLoader(Pairs(test=True), batch_size=4):
    print(x.shape)
