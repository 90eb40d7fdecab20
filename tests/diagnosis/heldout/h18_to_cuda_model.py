# expect: cuda-not-available
import torch
import torch.nn as nn

net = nn.Linear(3, 3)
net = net.to("cuda")
