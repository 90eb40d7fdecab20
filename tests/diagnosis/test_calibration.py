"""No confidently wrong diagnosis: each claim the text makes comes from a fact the run or the
source showed, each fix shown was tried and keeps what the program meant, and a cause no
trial settled is said as a candidate. Small programs of their own, one per class of mistake
the blind judges found (a claim that must not be made, a fix that silences but hides, a fix
on a conditional path)."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis import checks
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.intent import Intent, read_intent, spells_requires_grad, under
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.reasoning import diagnose
from tutor.diagnosis.verify import hides_bug, same_loss
from tutor.sandbox.models import (
    BackwardEvidence,
    Evidence,
    ParamEvidence,
    RunResult,
    StepEvidence,
)


def first_diagnosis(sandbox: Any, code: str, *, try_fixes: bool = True) -> Diagnosis:
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        return diagnose(code, sandbox.run(code), sandbox, try_fixes=try_fixes)[0]
    finally:
        checks.DEBUG = debug


def said(diagnosis: Diagnosis) -> str:
    """Everything a learner reads of it, in both languages."""
    parts = [diagnosis.title, diagnosis.explanation, diagnosis.fix, *diagnosis.chain]
    parts += [t for t in (diagnosis.fix_check, diagnosis.tell_apart) if t is not None]
    return "\n".join(f"{t.en}\n{t.zh}" for t in parts)


# -- the program's intent, read from its source --------------------------------------------
def test_the_freezing_code_is_read_even_misspelt_and_a_condition_leaves_it_unknown() -> None:
    flow = Flow.of("""import torch.nn as nn
net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
for p in net[0].parameters():
    p.require_grad = False
for name, p in net.named_parameters():
    if name.startswith("1"):
        p.requires_grad = False
net[1].bias.requires_grad_(False)
opt = __import__("torch").optim.SGD(list(net[1].parameters()), lr=0.1)
""")
    intent = read_intent(flow)
    freezes = {(f.line, f.prefix, f.misspelt, f.sure) for f in intent.frozen}
    assert freezes == {(4, "net[0]", True, True), (7, "net", False, False),
                       (8, "net[1].bias", False, True)}
    assert intent.freeze_of("net.0.weight") is not None
    assert intent.freeze_of("net.1.weight") is None  # its freeze sits under a condition
    assert intent.may_freeze("net.1.weight")
    assert intent.trains("net.1.weight") and not intent.trains("net.0.weight")
    # a program that reads a frozen parameter's gradient wants one: the freeze is in doubt
    read = read_intent(Flow.of("""for p in m.top.parameters():
    p.requires_grad = False
print(m.top.weight.grad)
"""))
    assert read.freeze_of("m.top.bias") is None and read.may_freeze("m.top.bias")
    assert spells_requires_grad("requires_grads") and not spells_requires_grad("retain_grad")
    assert under("trainer.model.head.weight", "self.model")
    assert not under("model2.weight", "model")


def test_an_optimizer_given_what_the_source_cannot_tell_leaves_the_intent_unknown() -> None:
    flow = Flow.of("""import torch
def train(params):
    opt = torch.optim.SGD(params, lr=0.1)
""")
    assert read_intent(flow).trains("w") is None


# -- what a fix must keep, on evidence alone -----------------------------------------------
def _param(name: str, **facts: Any) -> ParamEvidence:
    base = {"requires_grad": True, "grad_none": False, "in_optimizer": True, "reached": True,
            "changed": True}
    return ParamEvidence(name=name, **{**base, **facts})


def _run(*params: ParamEvidence, steps: list[StepEvidence] | None = None,
         losses: tuple[float, ...] = (), outcome: str = "ok") -> RunResult:
    return RunResult.model_validate({
        "outcome": outcome, "device": "cpu",
        "evidence": Evidence(params=list(params), steps=steps or [],
                             backwards=[BackwardEvidence(line=9, loss=v) for v in losses])})


def _step(optimizer: str, passes: int = 1, after: int = 1) -> StepEvidence:
    return StepEvidence(optimizer=optimizer, kind="SGD", n_params=1, passes=passes,
                        after_backward=after)


def test_a_fix_may_not_cut_off_or_stop_training_what_the_program_trained() -> None:
    before = _run(_param("net.w"), _param("net.b"), steps=[_step("opt")])
    cut = hides_bug(before, _run(_param("net.w", reached=False, grad_none=True, changed=False),
                                 _param("net.b"), steps=[_step("opt")]))
    assert cut is not None and "`net.w`" in cut.en and "`net.w`" in cut.zh
    unstepped = hides_bug(before, _run(_param("net.w", changed=False, in_optimizer=False),
                                       _param("net.b"), steps=[_step("opt")]))
    assert unstepped is not None and "no longer changes" in unstepped.en
    # a zero gradient an optimizer still steps is the model's own (a bias before BatchNorm)
    assert hides_bug(before, _run(_param("net.w", changed=False), _param("net.b"),
                                  steps=[_step("opt")])) is None
    # a parameter the program itself froze may stop: that is what it meant
    frozen = read_intent(Flow.of("net.w.requires_grad = False\n"))
    assert hides_bug(before, _run(_param("net.w", reached=False, changed=False),
                                  _param("net.b"), steps=[_step("opt")]), frozen) is None
    # one network under two names (target = policy) split by a copy: the trained tensors go
    # by the other name now, and as many parameters move as before
    aliased = _run(_param("target.w"), steps=[_step("opt")])
    split = _run(_param("target.w", changed=False, in_optimizer=False, reached=False),
                 _param("policy.w"), steps=[_step("opt")])
    assert hides_bug(aliased, split) is None


def test_a_fix_may_not_train_what_the_program_meant_to_freeze() -> None:
    intent = read_intent(Flow.of("""import torch
for p in net.body.parameters():
    p.require_grad = False
opt = torch.optim.SGD(net.head.parameters(), lr=0.1)
"""))
    before = _run(_param("net.body.w", changed=False, in_optimizer=False),
                  _param("net.head.w"), steps=[_step("opt")])
    after = _run(_param("net.body.w"), _param("net.head.w"), steps=[_step("opt")])
    told = hides_bug(before, after, intent)
    assert told is not None and "`net.body.w`" in told.en and "冻结" in told.zh
    assert hides_bug(before, after, Intent()) is None  # no freezing code: nothing meant


def test_a_fix_must_go_through_every_pass_and_keep_each_optimizer_to_its_own_loss() -> None:
    # each step after a backward() of its own, as a training loop runs them
    before = _run(_param("w"), steps=[_step("opt", after=n) for n in range(1, 5)])
    fewer = hides_bug(before, _run(_param("w"), steps=[_step("opt", after=n) for n in (1, 2)]))
    assert fewer is not None and "2 optimizer steps instead of 4" in fewer.en
    # a second step with no backward() between, removed, is no pass lost
    doubled = _run(_param("w"), steps=[_step("opt", after=n) for n in (1, 1, 2, 2)])
    once = _run(_param("w"), steps=[_step("opt", after=n) for n in (1, 2)])
    assert hides_bug(doubled, once) is None
    two = _run(_param("w"), steps=[_step("opt_d"), _step("opt_g")])
    added = hides_bug(two, _run(_param("w"), steps=[_step("opt_d", 2), _step("opt_g")]))
    assert added is not None and "`opt_d`" in added.en
    # one optimizer stepping once on two losses over what it holds is a way to write it
    one = _run(_param("w"), steps=[_step("opt"), _step("opt")])
    assert hides_bug(one, _run(_param("w"), steps=[_step("opt", 2), _step("opt")])) is None


def test_a_change_that_restores_a_graph_must_compute_the_same_loss() -> None:
    before = _run(losses=(0.6765,), outcome="error")
    assert same_loss(before, _run(losses=(0.6765,))) is None
    other = same_loss(before, _run(losses=(0.793,)))
    assert other is not None and "0.793" in other.en and "0.6765" in other.zh


# -- a fix that silences the error but hides the bug ---------------------------------------
ARGMAX_AS_COORDINATE = """import torch
import torch.nn as nn

scorer = nn.Linear(6, 10)
opt = torch.optim.Adam(scorer.parameters(), lr=0.01)
x = torch.randn(8, 6)
wanted = torch.randint(0, 10, (8,)).float()
position = scorer(x).argmax(dim=1).float()
loss = ((position - wanted) ** 2).mean()
opt.zero_grad()
loss.backward()
opt.step()
"""


def test_the_largest_value_is_not_offered_for_its_position(sandbox: Any) -> None:
    # max().values makes backward() run and fits the largest score to a position: refused,
    # and the advice says where a loss can be computed instead
    first = first_diagnosis(sandbox, ARGMAX_AS_COORDINATE)
    assert (first.id, first.root_line, first.fix_verified) == ("no-grad-fn", 8, False)
    assert ".max(" not in first.fix.en and first.patch is None
    assert "soft-argmax" in first.fix.en and "soft-argmax" in first.fix.zh
    assert any("would hide the bug" in step.en and "where your program computed" in step.en
               for step in first.chain)
    assert first.tell_apart is None  # the place is settled: argmax cut the graph there


MISSPELT_FREEZE = """import torch
import torch.nn as nn

net = nn.Module()
net.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
net.head = nn.Linear(8, 3)
for p in net.body.parameters():
    p.require_grad = False
optimizer = torch.optim.SGD(net.head.parameters(), lr=0.1)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for step in range(3):
    loss = nn.functional.cross_entropy(net.head(net.body(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_misspelt_freeze_is_named_and_the_optimizer_is_not_given_every_parameter(
        sandbox: Any) -> None:
    first = first_diagnosis(sandbox, MISSPELT_FREEZE)
    assert (first.id, first.root_line, first.fix_verified) == ("requires-grad-typo", 8, True)
    assert first.patch is not None and "+    p.requires_grad = False" in first.patch
    assert "net.parameters()" not in said(first)


MISSPELT_FREEZE_IN_HELPER = """import torch
import torch.nn as nn


def freeze_body(model):
    for param in model.body.parameters():
        param.requeires_grad = False


net = nn.Module()
net.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
net.head = nn.Sequential(nn.Linear(8, 3))
freeze_body(net)
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for step in range(3):
    loss = nn.functional.cross_entropy(net.head(net.body(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_freeze_in_a_helper_is_read_in_the_callers_names() -> None:
    """The run names the parameters by the caller's names (``net.body.0.weight``): the
    helper's ``model.body`` means ``net.body`` there, and so does an optimizer it builds."""
    intent = read_intent(Flow.of(MISSPELT_FREEZE_IN_HELPER))
    assert [(f.line, f.prefix, f.misspelt) for f in intent.frozen] == [(7, "net.body", True)]
    assert intent.freeze_of("net.body.0.weight") is not None
    assert intent.freeze_of("net.head.0.weight") is None
    built = read_intent(Flow.of("""import torch
def make(model, lr):
    return torch.optim.SGD(model.head.parameters(), lr=lr)
opt = make(net, 0.1)
"""))
    assert built.trains("net.head.0.weight") and not built.trains("net.body.0.weight")


def test_a_misspelt_freeze_in_a_helper_gets_the_spelling_fix(sandbox: Any) -> None:
    """Before the helper's names were read in the caller's, the fix (which freezes the
    body) was refused as stopping parameters the program trained: no diagnosis at all."""
    first = first_diagnosis(sandbox, MISSPELT_FREEZE_IN_HELPER)
    assert (first.id, first.root_line, first.fix_verified) == ("requires-grad-typo", 7, True)
    assert first.patch is not None and "+        param.requires_grad = False" in first.patch


TWO_OPTIMIZERS_STEP_BETWEEN = """import torch
import torch.nn as nn

gen = nn.Linear(2, 4)
disc = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
for it in range(2):
    fake = gen(torch.randn(6, 2))
    score = disc(fake)
    d_loss = -torch.log(1 - score).mean()
    g_loss = -torch.log(score).mean()
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
"""


def test_removing_or_moving_one_players_step_is_not_a_fix(sandbox: Any) -> None:
    # removing opt_d.step() stops training disc; moving it below g_loss.backward() steps disc
    # on g_loss's gradient too: both make the error go away and both are refused
    first = first_diagnosis(sandbox, TWO_OPTIMIZERS_STEP_BETWEEN)
    assert first.id == "inplace-modified-output" and first.root_line == 15
    assert first.fix_verified is not True and first.patch is None
    assert "opt_d" not in first.fix.en and "line 15" in first.fix.en
    assert any("would hide the bug" in step.en for step in first.chain)


# -- claims that must not be made ----------------------------------------------------------
TARGET_BUILT_BEFORE_THE_LOOP = """import torch

w_true = torch.randn(3, requires_grad=True)
x = torch.randn(20, 3)
target = x @ w_true
w = torch.zeros(3, requires_grad=True)
for step in range(3):
    loss = ((x @ w - target) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
"""


def test_the_value_built_before_the_loop_is_named_not_the_loss_the_loop_computes(
        sandbox: Any) -> None:
    first = first_diagnosis(sandbox, TARGET_BUILT_BEFORE_THE_LOOP)
    assert (first.id, first.root_line, first.fix_verified) == ("backward-twice-loop", 5, True)
    assert "`target`" in first.title.en and "`target`" in first.title.zh
    assert "line 5" in first.explanation.en and "第 5 行" in first.explanation.zh
    assert "`loss` was computed before the loop" not in said(first)
    assert "`loss` is computed once" not in said(first)


RESET_EACH_BATCH = """import torch
import torch.nn as nn

class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.h = torch.zeros(3)

    def forward(self, x):
        self.h = torch.tanh(self.lin(x) + self.h)
        return self.h

cell = Cell()
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
for batch in range(3):
    total = 0.0
    for t in range(4):
        total = total + cell(torch.randn(3)).sum()
    opt.zero_grad()
    total.backward()
    opt.step()
"""


def test_a_value_reset_at_the_top_of_each_pass_is_not_carried_across_passes(
        sandbox: Any) -> None:
    # `total` is carried across the inner loop's steps, and reset to 0.0 at the top of each
    # batch: nothing of it reaches the next backward(); the state on `cell` does
    from .test_spellings import candidate_lines

    assert candidate_lines(sandbox, RESET_EACH_BATCH, "backward-twice-carried") == {11}
    first = first_diagnosis(sandbox, RESET_EACH_BATCH)
    assert first.id == "backward-twice-carried" and first.root_line == 11
    assert "feeds `total`" not in " ".join(step.en for step in first.chain)
    assert first.fix_verified and first.patch is not None and "cell.h" in first.patch


LOSSES_ADDED_UP_THEN_PLOTTED = """import numpy as np
import torch

w = torch.ones(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)

def epoch():
    running = 0
    for _ in range(3):
        err = (w ** 2).sum()
        running += err
        opt.zero_grad()
        err.backward()
        opt.step()
    return running / 3

log = {"err": []}
for _ in range(2):
    log["err"].append(epoch())
print(np.array(log["err"]))
"""


def test_a_list_in_a_dict_is_not_called_a_tensor_and_gets_no_detach(sandbox: Any) -> None:
    first = first_diagnosis(sandbox, LOSSES_ADDED_UP_THEN_PLOTTED)
    assert (first.id, first.root_line, first.fix_verified) == ("numpy-of-loss-total", 11, True)
    assert first.patch is not None and "running += err.item()" in first.patch
    assert 'log["err"].detach()' not in said(first)


def test_without_a_trial_numpy_advice_does_not_call_a_list_a_tensor(sandbox: Any) -> None:
    first = first_diagnosis(sandbox, LOSSES_ADDED_UP_THEN_PLOTTED, try_fixes=False)
    assert first.id == "numpy-requires-grad"
    assert "`log[" not in first.title.en and '.detach().numpy()' not in first.fix.en.split(
        "`")[0]
    assert 'log["err"].detach()' not in said(first)


def test_a_result_called_again_is_not_said_to_be_a_reassigned_name(sandbox: Any) -> None:
    code = """import torch
import torch.nn.functional as F

pred = torch.randn(5, requires_grad=True)
goal = torch.randn(5)
loss = F.mse_loss(pred, goal)(pred, goal)
loss.backward()
"""
    first = first_diagnosis(sandbox, code)
    assert (first.id, first.root_line, first.fix_verified) == ("tensor-result-called", 6, True)
    assert "assignment" not in first.explanation.en
    assert first.patch is not None and "+loss = F.mse_loss(pred, goal)\n" in first.patch


BATCH_WHOSE_NUMBERS_MAKE_THE_WIDTH = """import torch
import torch.nn as nn

features = nn.Sequential(nn.Conv2d(3, 128, 3, padding=1), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten())
head = nn.Linear(1024, 5)
images = torch.randn(8, 3, 16, 16)
labels = torch.randint(0, 5, (8,))
loss = nn.functional.cross_entropy(head(features(images)), labels)
loss.backward()
"""


def test_eight_rows_of_128_features_are_a_batch_not_one_sample(sandbox: Any) -> None:
    # 8 x 128 = 1024 is the layer's width: the history shows the 8 is the images' batch
    first = first_diagnosis(sandbox, BATCH_WHOSE_NUMBERS_MAKE_THE_WIDTH)
    assert (first.id, first.root_line, first.fix_verified) == ("linear-in-features", 6, True)
    assert first.patch is not None and "nn.Linear(128, 5)" in first.patch
    assert "one sample" not in said(first)


def test_a_nan_gradient_under_a_finite_loss_is_not_called_a_nan_loss(sandbox: Any) -> None:
    code = """import torch

w = torch.tensor([80.0, -80.0], requires_grad=True)
p = torch.sigmoid(w)
a = torch.log(1 - p)
loss = torch.logsumexp(torch.stack([a, torch.zeros(2)]), dim=0).sum()
loss.backward()
print(loss.item(), w.grad)
"""
    first = first_diagnosis(sandbox, code)
    assert (first.id, first.root_line) == ("nan-from-op", 5)
    assert "the gradients turn into nan" in first.title.en
    assert "loss" not in first.title.en and "损失" not in first.title.zh
    assert "the loss computed from it stays finite" in first.explanation.en
    assert "optimizer" not in first.explanation.en  # the program has none


# -- a fix on a conditional path -----------------------------------------------------------
UPDATED_BY_HAND = """import torch

x = torch.linspace(0, 1, 30).unsqueeze(1)
y = 2 * x + 1
a = torch.randn(1, requires_grad=True)
c = torch.zeros(1, requires_grad=True)
for epoch in range(40):
    loss = ((x * a + c - y) ** 2).mean()
    loss.backward()
    a.data = a.data - 0.1 * a.grad.data
    c.data = c.data - 0.1 * c.grad.data
"""


def test_gradients_updated_by_hand_are_cleared_after_the_update_on_every_pass(
        sandbox: Any) -> None:
    # before backward() .grad is None on the first pass: .grad.zero_() there would raise; the
    # tried change clears both after the last update, and the run went through all 40 passes
    first = first_diagnosis(sandbox, UPDATED_BY_HAND)
    assert (first.id, first.fix_verified) == ("missing-zero-grad", True)
    assert first.patch is not None and "+    a.grad.zero_(); c.grad.zero_()" in first.patch
    assert first.patch.index("c.data = c.data") < first.patch.index("a.grad.zero_()")
    assert "line 9" in first.explanation.en  # the backward() the chain names too
    assert any("line 9" in step.en for step in first.chain)


def test_the_catalogs_advice_never_clears_a_gradient_before_it_exists() -> None:
    from tutor.diagnosis.catalog import load_catalog

    fix = load_catalog().get("missing-zero-grad").fix
    assert "after its update" in fix.en and "before the first backward() it is still None" in \
        fix.en


# -- untried code, and a cause no trial settled --------------------------------------------
def test_a_fix_no_trial_ran_has_no_code_written_with_the_programs_names(sandbox: Any) -> None:
    code = """import torch

w = torch.randn(3, requires_grad=True)
per_item = (w * 2 - 1) ** 2
per_item.backward()
"""
    tried = first_diagnosis(sandbox, code)
    assert tried.fix_verified and "per_item.sum()" in (tried.patch or "")
    untried = first_diagnosis(sandbox, code, try_fixes=False)
    assert untried.id == "non-scalar-backward" and not untried.fix_verified
    assert "per_item." not in untried.fix.en and "`.sum()`" in untried.fix.en
    assert "per_item." not in untried.fix.zh


def test_two_places_none_of_which_fixed_it_alone_are_candidates_not_the_cause(
        sandbox: Any) -> None:
    code = """import torch

x = torch.randn(4, requires_grad=True)
a = torch.relu(x)
b = torch.relu(x * 2)
out = a * b
a += 1
b += 1
out.sum().backward()
"""
    first = first_diagnosis(sandbox, code)
    assert first.fix_verified is False and first.tell_apart is not None
    told = first.tell_apart
    # the places, with no ranking claimed for a cause no change settled
    assert "Where it points:" in told.en and "It also points here:" in told.en
    assert "它指向：" in told.zh
    assert "likely" not in told.en and "最可能" not in told.zh
    assert "line 7" in told.en and "line 8" in told.en
    assert "none fixed it" in told.en and "Try the first fix" not in told.en


def test_the_catalogs_code_that_only_looks_at_a_value_is_not_tried_as_a_change() -> None:
    from tutor.diagnosis.advice import subject_snippets
    from tutor.diagnosis.catalog import load_catalog
    from tutor.diagnosis.filling import first_fitting

    entry = load_catalog().get("linear-in-features")
    shown = first_fitting(entry.options("fix"), {
        "var": "`feats`", "var_code": "feats", "callee": "`head`", "cols1": "480",
        "rows2": "48", "cols2": "120", "rows1": "1", "line": "46"})
    assert shown is not None and "`feats.shape`" in shown.en
    tried = [snippet for _, snippet in subject_snippets(entry, shown)]
    assert tried == ["feats.flatten(1)"]
