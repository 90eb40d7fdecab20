"""GradScaler's protocol errors: each message has one documented cause, found in the source
and fixed by the change the AMP recipe asks for, tried before it is shown. A program that
follows the recipe raises none of them, and a cast the trial shows is not the cause is not
offered as the fix."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

HEAD = """import torch
import torch.nn as nn
torch.manual_seed(0)
"""

HALF_HEAD = HEAD + """encoder = nn.Linear(6, 8)
head = nn.Linear(8, 3).half()
opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for step in range(3):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = head(encoder(x).half()).float()
        loss = nn.functional.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(step, round(loss.item(), 3))
"""


def test_a_layer_made_half_is_the_cause_and_keeping_it_float32_runs(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, HALF_HEAD)[0]
    assert (first.id, first.root_line) == ("amp-fp16-weights", 5)
    assert first.fix_verified is True
    assert first.patch is not None and "+head = nn.Linear(8, 3)\n" in first.patch
    assert "`nn.Linear(8, 3).half()`" in first.explanation.en
    assert "第 5 行" in first.title.zh


BYPASSED = HEAD + """net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
adam = torch.optim.Adam(net.parameters(), lr=1e-3)
amp_scaler = torch.amp.GradScaler("cpu")
data = [(torch.randn(4, 5), torch.randint(0, 2, (4,))) for _ in range(3)]
for inputs, labels in data:
    adam.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(net(inputs), labels)
    amp_scaler.scale(loss).backward()
    adam.step()
    amp_scaler.update()
print("done", loss.item())
"""


def test_a_step_past_the_scaler_is_replaced_by_the_scalers_step(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, BYPASSED)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("amp-step-bypassed", 13, True)
    assert first.patch is not None and "+    amp_scaler.step(adam)" in first.patch
    assert "`adam`" in first.title.en and "`adam.step()`" in first.explanation.en


IDLE = HEAD + """class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(3, 3)
        self.aux = nn.Linear(3, 1)

    def loss(self, x, step):
        out = self.main(x).pow(2).mean()
        if step % 3 == 0:
            out = out + self.aux(x).mean() ** 2
        return out


model = Two()
opts = [torch.optim.SGD(model.main.parameters(), lr=0.1),
        torch.optim.SGD(model.aux.parameters(), lr=0.1)]
scaler = torch.amp.GradScaler("cpu")
for step in range(4):
    for opt in opts:
        opt.zero_grad()
    loss = model.loss(torch.randn(8, 3), step)
    scaler.scale(loss).backward()
    for opt in opts:
        scaler.step(opt)
    scaler.update()
    print(step, loss.item())
"""


def test_an_optimizer_without_gradients_this_pass_is_stepped_only_when_it_has_some(
        sandbox: Any) -> None:
    first = diagnoses_for(sandbox, IDLE)[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "amp-optimizer-without-grads", 27, True)
    assert first.patch is not None and "p.grad is not None for group in opt.param_groups" \
        in first.patch


ACCUMULATED = HEAD + """def fit(model, batches, accumulate=2):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x), y) / accumulate
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accumulate == 0:
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    return loss.item()


batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
print(fit(nn.Linear(3, 1), batches))
"""


def test_unscale_on_every_accumulated_pass_moves_into_the_step_block(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, ACCUMULATED)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("amp-unscaled-twice", 11, True)
    assert first.patch is not None
    moved = first.patch.splitlines()
    # both lines leave the loop's body and come back, deeper, right before the step
    assert "-        scaler.unscale_(opt)" in moved
    assert "+            scaler.unscale_(opt)" in moved
    assert "+            nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in moved
    assert "`(i + 1) % accumulate == 0`" in first.title.en


RECIPE = HEAD + """net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = net(torch.randn(8, 4)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
print("ok", loss.item())
"""


def test_the_recipe_itself_raises_nothing_and_gets_no_amp_diagnosis(sandbox: Any) -> None:
    assert not [d for d in diagnoses_for(sandbox, RECIPE) if d.id.startswith("amp-")]


DATA_HALF = HEAD + """net = nn.Linear(4, 2).half()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x = torch.randn(8, 4).half()
for step in range(2):
    opt.zero_grad()
    loss = net(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


def test_the_layers_cast_is_the_cause_where_the_data_is_cast_too(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, DATA_HALF)[0]
    # the layer's cast (line 4) makes the float16 gradients, not the data's (line 7); with
    # the layer float32, the float16 data must meet it in float32 for the trial to run
    assert (first.id, first.root_line, first.fix_verified) == ("amp-fp16-weights", 4, True)
    assert first.patch is not None
    assert "-net = nn.Linear(4, 2).half()\n+net = nn.Linear(4, 2)\n" in first.patch


SKIPPED = HEAD + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
targets = [1.0, 500.0, 1.0, 1.0]
for step, target in enumerate(targets):
    opt.zero_grad()
    loss = (net(torch.randn(8, 4)) - target).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    norm = nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    if norm > 100:
        print("skipping a large step", step)
        continue
    scaler.step(opt)
    scaler.update()
"""


def test_a_continue_that_skips_the_update_gets_an_update_before_it(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, SKIPPED)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("amp-update-skipped", 16, True)
    assert first.patch is not None and "+        scaler.update()\n         continue" in first.patch
    assert "`norm > 100`" in first.explanation.en


NO_UPDATE = HEAD + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    opt.zero_grad()
    scaler.scale(net(torch.randn(8, 4)).pow(2).mean()).backward()
    scaler.step(opt)
"""


def test_a_scaler_never_updated_gets_its_update_after_the_step(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, NO_UPDATE)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("amp-update-missing", 10, True)
    assert first.patch is not None and "     scaler.step(opt)\n+    scaler.update()" in first.patch


REBUILT = HEAD + """net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    opt.zero_grad()
    value = (net(torch.randn(8, 4)) - 1).pow(2).mean()
    loss = torch.tensor(value.item(), requires_grad=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


def test_a_loss_that_reaches_no_parameter_is_not_read_as_an_idle_optimizer(
        sandbox: Any) -> None:
    # guarding the step would run and skip every step: the trial must see a step move
    # parameters before the claim "idle on this pass" is made (a judged wrong of 2026-12-07-g)
    found = [d.id for d in diagnoses_for(sandbox, REBUILT)]
    assert "amp-optimizer-without-grads" not in found
