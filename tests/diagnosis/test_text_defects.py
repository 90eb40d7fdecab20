"""Text defects the lead and round 1 saw in diagnoses, each on a program or diagnosis of its
own: the line next to a title that is not the root cause's, a verb that does not agree with
one name, a made-up name shown as code, a sound procedure replaced because a concrete change
failed, the words for a model that never called eval() given to one that did, a fix that
writes an expression three times, a catalog id the benchmark's rubric cannot judge."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from tutor.cli.diagnosis_view import format_diagnosis, heading
from tutor.cli.exercise_view import AttemptView
from tutor.diagnosis.advice import concrete
from tutor.diagnosis.catalog import load_catalog
from tutor.diagnosis.contract import violations
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.reasoning import diagnose
from tutor.grading.verdicts import Verdict
from tutor.i18n import T
from tutor.learning import Attempt
from tutor.tui.render import diagnosis_markdown

from .runs import rubric, verified_diagnosis

DETACHED = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
z = y.detach()
w = (z ** 2).sum()
w.backward()
print(x.grad)
"""


def test_the_line_beside_the_title_is_the_root_cause_and_the_error_is_named_apart(
        sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, DETACHED, {"no-grad-fn-detached"}, 4, "detach")
    assert first.line == 6
    assert heading(first, "en").endswith("(line 4; the error shows on line 6)")
    assert heading(first, "zh").endswith("（第 4 行；错误出现在第 6 行）")
    assert "(line 6)" not in format_diagnosis(first, "en")
    verdict = Verdict(step="a/b", status="error", score=0, max_score=1, checks=[])
    shown = diagnosis_markdown(Attempt("a/b", verdict, diagnoses=[first]), "en")
    assert "line 4; the error shows on line 6" in shown
    console = Console(file=io.StringIO(), width=200, color_system=None)
    AttemptView(console, "en").diagnoses(Attempt("a/b", verdict, diagnoses=[first]))
    assert "(line 4; the error shows on line 6)" in console.file.getvalue()  # type: ignore[attr-defined]


def test_one_name_gets_a_verb_that_agrees_with_it(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, DETACHED, {"no-grad-fn-detached"}, 4, "detach")
    assert first.fix_check is not None
    assert "`x` gets gradients" in first.fix_check.en, first.fix_check.en


def test_a_diagnosis_on_one_line_keeps_the_plain_line_label() -> None:
    one = Diagnosis(id="x", severity="error", title=T("T", "T"), explanation=T("e", "e"),
                    fix=T("f", "f"), line=3, root_line=3)
    assert heading(one, "en").endswith("(line 3)")


def test_one_unsettled_cause_lists_no_empty_others() -> None:
    """A cause the evidence does not settle, with no other candidate, printed "Other possible
    causes: " and nothing after it (corpus6 previous-state-or-zeros-cortexnet)."""
    alone = Diagnosis(id="x", severity="error", title=T("T", "T"), explanation=T("e", "e"),
                      fix=T("f", "f"), line=3, root_line=3,
                      tell_apart=T("The evidence does not settle the cause.",
                                   "证据还不能确定原因。"))
    for lang in ("en", "zh"):
        text = format_diagnosis(alone, lang)
        assert "Other possible causes" not in text and "其他可能的原因" not in text, text
        assert alone.tell_apart is not None and alone.tell_apart.get(lang) in text
    two = alone.model_copy(update={"alternatives": ["y"]})
    assert "  Other possible causes: y\n" in format_diagnosis(two, "en")


UNNAMED_INPUT = """import torch
import torch.nn as nn
fc = nn.Linear(48, 2)
out = fc(torch.randn(5, 3, 4, 4) * 2)
"""


def test_a_value_the_learner_never_named_is_described_not_shown_as_code(
        sandbox: Any) -> None:
    found = diagnose(UNNAMED_INPUT, sandbox.run(UNNAMED_INPUT), sandbox)
    chain = [step.en for d in found for step in d.chain]
    assert any("its input has shape (5, 3, 4, 4)" in step for step in chain), chain
    assert not any("`the input`" in step for step in chain), chain
    assert all(violations(d, UNNAMED_INPUT) == [] for d in found)


def test_the_contract_finds_prose_shown_as_code() -> None:
    made_up = Diagnosis(id="x", severity="error", title=T("T", "T"),
                        explanation=T("`the input` has shape (2,)", "`the input` 的形状是 (2,)"),
                        fix=T("f", "f"), line=1)
    assert any("prose shown as code" in v for v in violations(made_up, "x = 1\n"))


def test_advice_that_writes_the_runs_facts_into_code_is_a_concrete_change() -> None:
    assert concrete("Keep the number: `{name}.append({op}.item())` on line {line}.")
    assert concrete("Build the layer with `in_channels={got}`.")
    assert not concrete("Create layers in `__init__` (`self.fc = nn.Linear(...)`), use "
                        "`nn.ModuleList`, and check the model's `.parameters()` on line {line}.")
    assert not concrete("Make sure an input has `requires_grad=True`: "
                        "`print({var_code}.requires_grad, {var_code}.grad_fn)` shows where.")


EMPTY_LIST = """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        self.layers = [nn.Linear(3, 3), nn.Linear(3, 1)]
        super().__init__()

net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
"""


def test_sound_general_advice_stays_when_the_concrete_change_tried_did_not_fix_it(
        sandbox: Any) -> None:
    first = diagnose(EMPTY_LIST, sandbox.run(EMPTY_LIST), sandbox)[0]
    assert first.id == "optimizer-empty-params"
    assert any("tried in a re-run" in step.en for step in first.chain), first.chain
    assert "nn.ModuleList" in first.fix.en and "did not fix it" not in first.fix.en
    assert first.fix_failed is False and first.fix_verified is False


REFUTED = """import torch
import numpy as np
w = torch.randn(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
history = []
for _ in range(3):
    loss = (w ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss)
print(torch.stack(history).numpy())
"""


def test_a_concrete_change_that_was_refuted_is_still_not_the_advice(sandbox: Any) -> None:
    first = diagnose(REFUTED, sandbox.run(REFUTED), sandbox)[0]
    assert first.fix_failed is True, first.fix.en
    assert "history.append(loss.item())" not in first.fix.en


EVAL_THEN_TRAIN = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 4)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()

def predict(batch):
    model.eval()
    model.train()
    with torch.no_grad():
        return model(batch).argmax(1)

print(predict(x[:5]))
"""


def test_a_model_that_called_eval_is_not_told_it_predicts_without_it(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, EVAL_THEN_TRAIN, {"dropout-no-eval"}, 15, "train()")
    for lang in ("en", "zh"):
        assert "eval()` makes" not in first.explanation.get(lang)
    assert "`model.train()` on line 15" in first.explanation.en
    assert "第 15 行的 `model.train()`" in first.explanation.zh


ROUNDED = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(64, 4)
target = (x @ torch.tensor([[1.0], [2.0], [0.0], [-1.0]])).round()
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(10):
    pred = torch.round(net(x) * 2)
    opt.zero_grad()
    ((pred - target) ** 2).mean().backward()
    opt.step()
"""


def test_the_straight_through_fix_computes_and_shows_the_expression_once(sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, ROUNDED, {"zero-gradient-op"}, 9, "unrounded")
    assert first.fix.en.count("net(x) * 2") == 1, first.fix.en
    assert first.patch is not None and first.patch.count("net(x) * 2") == 2  # - and + lines
    assert violations(first, ROUNDED) == []


def test_every_catalog_id_is_judged_by_a_family_of_the_rubric() -> None:
    FAMILIES = rubric().FAMILIES
    judged = set().union(*FAMILIES.values())
    ids = {entry.id for entry in load_catalog().entries}
    assert ids - judged == set(), "catalog ids no family of bench_diagnosis judges"
    assert judged - ids == set(), "family ids the catalog does not have"
    assert "view-not-contiguous" in FAMILIES["view-shape"]


def test_a_chain_step_two_evidence_steps_wrote_is_said_once() -> None:
    from tutor.diagnosis.filling import tidied
    from tutor.i18n import T

    seen = T("the re-run saw `block` called on line 22 in training mode",
             "重新运行时看到 `block` 在第 22 行 以训练模式被调用")
    other = T("`block.train()` on line 15 switches it back", "第 15 行的 `block.train()` 切回")
    made = Diagnosis(id="x", severity="error", title=T("T", "T"), explanation=T("E", "E"),
                     fix=T("F", "F"), chain=[seen, other, seen])
    shown = tidied(made).chain
    assert [step.en for step in shown] == [seen.en, other.en]
    assert shown[0].zh == "重新运行时看到 `block` 在第 22 行以训练模式被调用"  # still tidied
