"""Gradient clipping out of its place, written as learners write it (corpus16
tabm-clip-before-backward and node-trainer-clips-after-step, after their scoring): under its
condition (``if grad_clip is not None:``), beside a clip that only measures the norm
(``max_norm=inf``). The block is moved whole between backward() and step(); the claim is the
order, not a lower loss (a clip that slows learning is still where it belongs)."""

from __future__ import annotations

from typing import Any

from .runs import found_with_a_working_fix, not_diagnosed

LOOP = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 4)
y = x @ torch.randn(4, 1) * 20
model = nn.Linear(4, 1)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
max_norm = 0.5
for step in range(30):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
{body}
print(round(loss.item(), 3))
"""
CLIP = """    if max_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)"""
MEASURE = "    seen = nn.utils.clip_grad_norm_(model.parameters(), float('inf'))"


def test_a_conditional_clip_before_backward_is_moved_whole(sandbox: Any) -> None:
    code = LOOP.format(body=f"{CLIP}\n    loss.backward()\n    opt.step()")
    found_with_a_working_fix(sandbox, "clip-order", 12, "+    loss.backward()", code)
    not_diagnosed(sandbox, "clip-order",
                  LOOP.format(body=f"    loss.backward()\n{CLIP}\n    opt.step()"))


def test_a_clip_after_step_beside_a_measuring_clip_is_moved(sandbox: Any) -> None:
    code = LOOP.format(body=f"    loss.backward()\n    opt.step()\n{MEASURE}\n{CLIP}")
    found_with_a_working_fix(sandbox, "clip-order", 15, "+    if max_norm is not None:", code)


AMP = """import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(64, 8), torch.randn(64, 1)
for step in range(20):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    scaler.scale(loss).backward()
{unscale}    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
print(round(loss.item(), 4))
"""


def test_a_clip_of_scaled_gradients_unscales_first(sandbox: Any) -> None:
    """corpus16 amp-clip-scaled-gradients and trainer-clips-before-unscale (after their
    scoring): with a GradScaler, clip_grad_norm_ before scaler.unscale_ cuts gradients still
    multiplied by 65536; the change tried unscales just before the clip."""
    found_with_a_working_fix(sandbox, "clip-scaled-gradients", 12, "+    scaler.unscale_(opt)",
                             AMP.format(unscale=""))
    not_diagnosed(sandbox, "clip-scaled-gradients",
                  AMP.format(unscale="    scaler.unscale_(opt)\n"))
