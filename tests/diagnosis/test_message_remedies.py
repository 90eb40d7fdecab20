"""Remedies torch's messages name, made where the program needs them and tried: the vmap
randomness flag (the vmap call is not the failing line), and for sparse gradients given to a
dense optimizer, dense gradients from the layer (or the optimizer the message proposes)."""

from __future__ import annotations

from typing import Any

from .runs import first_for_error, verified_diagnosis

VMAP = """import torch
import torch.nn as nn
from torch.func import functional_call, vmap

net = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Linear(8, 1))
params = dict(net.named_parameters())

def one(x):
    return functional_call(net, params, (x,)).squeeze(-1)

batch = torch.randn(16, 3)
values = vmap(one)(batch)
values.sum().backward()
print(values.shape)
"""

SPARSE = """import torch
import torch.nn as nn

emb = nn.Embedding(50, 8, sparse=True)
head = nn.Linear(8, 1)
opt = torch.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=1e-2)
ids = torch.randint(0, 50, (32,))
for _ in range(3):
    loss = head(emb(ids)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_the_vmap_call_gets_the_randomness_flag(sandbox: Any) -> None:
    verified_diagnosis(sandbox, VMAP, {"message-remedy"}, 12,
                       'vmap(one, randomness="different")')


def test_a_sparse_embedding_under_adam_makes_dense_gradients(sandbox: Any) -> None:
    verified_diagnosis(sandbox, SPARSE, {"message-remedy"}, 6, "sparse=False")


def test_a_proposed_optimizer_that_does_not_fit_is_not_shown(sandbox: Any) -> None:
    """SparseAdam refuses the dense head's parameters: tried, it fails, so no fix shows it."""
    code = SPARSE.replace("sparse=True", "**{'sparse': True}")  # no flag to turn off
    first = first_for_error(sandbox, code)
    assert "SparseAdam" not in (first.patch or "")
