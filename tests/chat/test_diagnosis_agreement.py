"""The Diagnosis tab and the tutor chat show the same of a diagnosis on a step (issue 22 item
9): a concrete fix that is the step's answer is withheld in both, with the same words."""

from __future__ import annotations

from typing import Any

from tutor.chat import ChatContext, Tutor
from tutor.chat import messages as msg
from tutor.chat.guardrails import shown_diagnoses
from tutor.course.models import Course
from tutor.diagnosis.models import Diagnosis
from tutor.grading.models import Verdict
from tutor.i18n import T
from tutor.learning import LearningSession
from tutor.progress import ProgressStore
from tutor.sandbox.models import ErrorInfo, RunResult

ANSWER_FIX = Diagnosis(
    id="non-scalar-backward",
    severity="error",
    title=T("`cube` is not a scalar", "`cube` 不是标量"),
    explanation=T("backward() needs one number.", "backward() 需要一个数。"),
    fix=T("Write `cube = (w ** 3).sum()` and call `cube.backward()`.",
          "写 `cube = (w ** 3).sum()`，再调用 `cube.backward()`。"),
    patch="-cube = w ** 3\n+cube = (w ** 3).sum()\n",
)
GENERAL_FIX = ANSWER_FIX.model_copy(
    update={"fix": T("Reduce the output to one number first.", "先把输出归约成一个数。"),
            "patch": None}
)
RUN = RunResult(
    outcome="error",
    device="cpu",
    error=ErrorInfo(type="RuntimeError", message="grad can be implicitly created only for "
                    "scalar outputs", line=3),
)


def test_a_fix_that_is_the_steps_answer_is_withheld_and_a_general_one_kept(
    course: Course,
) -> None:
    _, step = course.find("backward/cube")
    withheld, kept = shown_diagnoses([ANSWER_FIX, GENERAL_FIX], step)
    assert withheld.fix == msg.FIX_WITHHELD and withheld.patch is None
    assert withheld.explanation == ANSWER_FIX.explanation  # what happened stays
    assert kept == GENERAL_FIX
    _, reading = course.find("backward/intro")
    assert shown_diagnoses([ANSWER_FIX], reading) == [ANSWER_FIX]  # nothing to give away


def test_the_chat_shows_what_the_tab_shows(course: Course, tutor: Tutor) -> None:
    context = ChatContext(lesson_id="backward", step_id="cube", last_run=RUN,
                          diagnoses=[ANSWER_FIX])
    for lang in ("en", "zh"):
        answer = tutor.ask("why does my code fail?", lang=lang, context=context)
        assert msg.FIX_WITHHELD.get(lang) in answer.text
        assert "(w ** 3).sum()" not in answer.text and not answer.redacted


class _Runner:
    """Never asked to run: the grading fake carries the run."""

    def run(self, code: str, **options: Any) -> RunResult:
        return RUN


class _Grading:
    """A run that fails; the verdict carries it (the session diagnoses it)."""

    def grade_step(self, lesson: Any, step: Any, code: str, *, runner: Any,
                   device: str = "cpu") -> Verdict:
        return Verdict(step=f"{lesson.id}/{step.id}", status="error", score=0, max_score=2,
                       run=RUN)


def test_the_learning_session_keeps_the_tabs_diagnoses_to_the_same_rule(
    course: Course, tmp_path: Any
) -> None:
    store = ProgressStore(tmp_path / "progress.db")
    session = LearningSession(course, _Runner(), store, grading=_Grading(),  # type: ignore[arg-type]
                              diagnose=lambda run, code: [ANSWER_FIX])
    session.goto("backward", "cube")
    attempt = session.run("w = torch.tensor([2., 5.], requires_grad=True)\n")
    assert attempt.diagnoses[0].fix == msg.FIX_WITHHELD
    store.close()
