# expect: dataloader-sampler-and-shuffle
# ruff: noqa  (a learner's program, mistakes included)
import torch
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

data = TensorDataset(torch.randn(20, 3), torch.randint(0, 2, (20,)))
train_idx = list(range(15))
loader = DataLoader(data, batch_size=4, sampler=SubsetRandomSampler(train_idx), shuffle=True)
print(len(loader))
