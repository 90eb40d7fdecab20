"""A network copied to give targets and never run (corpus15 dqn-max-q-from-online-network,
after its scoring): the run never calls the copy, while the network it copies is called
without a graph for a loss it trains on; the change tried calls the copy there. A copy that is
called, and a copy kept only to save the best weights (the network called without a graph only
to evaluate), are not flagged."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

TARGET_NET = """import copy
import torch
import torch.nn as nn
torch.manual_seed(0)

online = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
target_net = copy.deepcopy(online)
opt = torch.optim.Adam(online.parameters(), lr=1e-2)
for step in range(60):
    s, s2 = torch.randn(32, 5), torch.randn(32, 5)
    a, r = torch.randint(0, 2, (32,)), torch.rand(32)
    with torch.no_grad():
        nxt = {net}(s2).amax(1)
    loss = ((online(s).gather(1, a.unsqueeze(1)).squeeze(1) - (r + 0.9 * nxt)) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 19:
        target_net.load_state_dict(online.state_dict())
print(round(loss.item(), 4))
"""

BEST_KEPT = """import copy
import torch
import torch.nn as nn
torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y, xv, yv = torch.randn(32, 4), torch.randn(32, 1), torch.randn(8, 4), torch.randn(8, 1)
best, best_loss = copy.deepcopy(model), float("inf")
for epoch in range(10):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        val = ((model(xv) - yv) ** 2).mean().item()
    if val < best_loss:
        best_loss = val
        best.load_state_dict(model.state_dict())
print(round(best_loss, 4))
"""


def test_a_target_network_never_run_is_called_for_the_targets(sandbox: Any) -> None:
    found_with_a_working_fix(sandbox, "copy-never-run", 13, "nxt = target_net(s2)",
                             TARGET_NET.format(net="online"))
    not_diagnosed(sandbox, "copy-never-run", TARGET_NET.format(net="target_net"))


def test_a_copy_kept_to_save_the_best_weights_is_not_flagged(sandbox: Any) -> None:
    not_diagnosed(sandbox, "copy-never-run", BEST_KEPT)
