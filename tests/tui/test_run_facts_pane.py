"""A wrong answer that no check explains shows what the learner's run did (its losses, what
the optimizer moved) instead of a bare "nothing found": the session computes the facts, the
diagnosis pane shows them, in the learner's language."""

from __future__ import annotations

from typing import Any

from tutor.course.models import Course
from tutor.grading.models import Verdict
from tutor.i18n import T
from tutor.learning import Attempt, LearningSession
from tutor.progress import ProgressStore
from tutor.tui.render import diagnosis_markdown

TRAINS = """import torch
torch.manual_seed(0)
w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
x = torch.randn(16, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
for _ in range(30):
    opt.zero_grad()
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    opt.step()
answer = w.sum().item()
"""


def test_a_wrong_answer_from_a_run_with_no_mistake_gets_its_facts(
        course: Course, store: ProgressStore, sandbox: Any) -> None:
    session = LearningSession(course, sandbox, store)
    result = sandbox.run(TRAINS)
    assert result.ok
    found, facts = session.diagnose_run(result, TRAINS, wrong=True)
    assert found == []
    said = [fact.en for fact in facts]
    assert any("line 10" in line and "falling" in line for line in said), said
    assert any("`opt` steps 1 parameters: all of them changed" in line for line in said), said
    assert all(fact.zh for fact in facts)
    # a right answer pays for no re-run and gets no facts
    assert session.diagnose_run(result, TRAINS, wrong=False)[1] == []


def test_the_pane_shows_the_facts_in_the_learners_language() -> None:
    verdict = Verdict(step="mini-basics/grad-value", status="fail", score=0, max_score=1)
    attempt = Attempt(step_ref=verdict.step, verdict=verdict, run_facts=[
        T("the loss backpropagated on line 9 went from 2 to 2.01: about the same",
          "第 9 行反向传播的损失从 2 变为 2.01：几乎不变")])
    en = diagnosis_markdown(attempt, "en")
    assert "What the run shows:" in en and "- the loss backpropagated on line 9" in en
    zh = diagnosis_markdown(attempt, "zh")
    assert "这次运行显示：" in zh and "- 第 9 行反向传播的损失" in zh
    assert "What the run shows" not in diagnosis_markdown(
        Attempt(step_ref=verdict.step, verdict=verdict), "en")
