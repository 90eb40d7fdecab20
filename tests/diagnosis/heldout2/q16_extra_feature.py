# expect: linear-in-features
# ruff: noqa
import torch
from torch import nn

# house prices: area, rooms, age
houses = torch.tensor([[120.0, 3, 10], [80.0, 2, 30], [200.0, 5, 2]])
prices = torch.tensor([[300.0], [180.0], [520.0]])

# add a bias column of ones by hand
houses = torch.cat([houses, torch.ones(3, 1)], dim=1)

regressor = nn.Linear(3, 1)
pred = regressor(houses)
loss = nn.MSELoss()(pred, prices)
loss.backward()
print(regressor.weight.grad)
