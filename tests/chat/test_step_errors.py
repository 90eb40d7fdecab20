"""A question about an error that quotes none ("why does it error?", "它为什么报错"): about the
learner's last run, else the step they are on (the catalog entries its prompt quotes or that
name it), else a request for the message, never the off-topic refusal (QA2 #4)."""

from __future__ import annotations

import pytest

from tutor.chat import ChatContext, Tutor, detect_lang
from tutor.chat.intents import asks_about_error
from tutor.course import load_course
from tutor.diagnosis.models import Diagnosis
from tutor.i18n import T


@pytest.fixture(scope="module")
def bundled() -> Tutor:
    return Tutor(load_course())


ON_FIX_SCALAR = ChatContext(lesson_id="non-scalar", step_id="fix-scalar")


@pytest.mark.parametrize(
    "question", ["why does it error?", "what's wrong?", "它为什么报错？", "这段代码为什么报错"]
)
def test_on_a_step_the_error_is_the_steps(bundled: Tutor, question: str) -> None:
    answer = bundled.ask(question, context=ON_FIX_SCALAR)
    assert answer.kind == "context" and not answer.refused
    assert answer.sources == ["catalog:non-scalar-backward"]
    assert answer.lessons == ["non-scalar"]
    # the non-scalar explanation, not another lesson's quiz (no_grad was what QA2 got)
    assert "no_grad" not in answer.text
    assert ("标量" if detect_lang(question) == "zh" else "scalar") in answer.text


def test_the_step_error_explains_why_and_keeps_the_fix_back(bundled: Tutor) -> None:
    answer = bundled.ask("why does it error?", context=ON_FIX_SCALAR)
    assert "z.sum().backward()" not in answer.text and not answer.redacted
    assert "hint" in answer.text  # the way to the fix is the hint ladder


def test_a_loop_step_names_the_loop_error_first(bundled: Tutor) -> None:
    answer = bundled.ask("why does my code fail", context=ChatContext(
        lesson_id="matrix-mm", step_id="twice"
    ))
    assert answer.sources[0] == "catalog:backward-twice-loop"


@pytest.mark.parametrize("question", ["为什么报错", "它为什么报错？", "why does it error?"])
def test_without_a_step_it_asks_for_the_message_and_is_never_off_topic(
    bundled: Tutor, question: str
) -> None:
    answer = bundled.ask(question)
    assert answer.kind == "answer" and not answer.refused
    assert answer.lessons == ["errors"]
    assert ("--step" in answer.text) and ("traceback" in answer.text)


def test_the_last_run_comes_before_the_step(bundled: Tutor) -> None:
    diagnosis = Diagnosis(
        id="backward-twice",
        severity="error",
        title=T("Backward twice", "两次反向传播"),
        explanation=T("The graph was freed.", "计算图已被释放。"),
        fix=T("Recompute the output.", "重新计算输出。"),
        lesson_ref="matrix-mm/twice",
    )
    context = ON_FIX_SCALAR.model_copy(
        update={"diagnoses": [diagnosis], "last_run": None}
    )
    answer = bundled.ask("why does it error?", context=context)
    assert answer.sources[0] == "diagnosis:backward-twice"
    assert "The graph was freed." in answer.text


def test_a_quoted_message_is_still_answered_by_its_words(bundled: Tutor) -> None:
    question = "why does backward raise grad can be implicitly created only for scalar outputs"
    answer = bundled.ask(question, context=ON_FIX_SCALAR)
    assert answer.kind == "answer" and answer.lessons[0] == "non-scalar"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("why does it error?", True),
        ("为什么报错", True),
        ("报什么错", True),
        ("what is a leaf", False),
        ("why is x.grad None", False),
        ("为什么梯度会累加", False),
    ],
)
def test_error_questions_are_recognised(question: str, expected: bool) -> None:
    assert asks_about_error(question) is expected

