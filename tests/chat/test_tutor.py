"""The offline tutor: language, lesson references, off-topic, hints, answers about a run,
and the guardrails applied to whatever it composes."""

from __future__ import annotations

from tutor.chat import ChatContext, Tutor
from tutor.course.models import Course
from tutor.diagnosis.models import Diagnosis
from tutor.i18n import T
from tutor.sandbox.models import ErrorInfo, ProbeResult, RunResult, TensorSnapshot


def _snap(**kw: object) -> TensorSnapshot:
    base = {
        "shape": [2],
        "dtype": "torch.float32",
        "device": "cpu",
        "requires_grad": True,
        "is_leaf": True,
        "numel": 2,
    }
    return TensorSnapshot.model_validate(base | kw)


def test_answers_in_the_questions_language_and_names_lesson_and_step(tutor: Tutor) -> None:
    en = tutor.ask("what does backward do?")
    assert en.kind == "answer" and en.lessons[0] == "backward"
    assert "backward/intro" in en.text and "Read:" in en.text
    zh = tutor.ask("backward 做什么？")
    assert zh.lessons[0] == "backward" and "参阅" in zh.text and "Read:" not in zh.text
    forced = tutor.ask("what does backward do?", lang="zh")
    assert "参阅" in forced.text


def test_answers_carry_a_short_code_example(tutor: Tutor) -> None:
    answer = tutor.ask("how do I stop gradients with detach?")
    assert answer.lessons[0] == "detach"
    assert "```python" in answer.text and "detach()" in answer.text


def test_typos_in_api_names_are_understood(tutor: Tutor) -> None:
    assert tutor.ask("what does backwrad do").lessons[0] == "backward"
    assert tutor.ask("when should I use detatch()?").lessons[0] == "detach"
    # only the course's own lessons are named, even where the glossary knows more
    assert set(tutor.ask("how does retian_graph work?").lessons) <= {"backward", "detach"}


def test_off_topic_questions_are_declined_honestly(tutor: Tutor) -> None:
    for question in ("what's the weather in Paris", "写一首关于猫的诗", "asdf qwerty zxcv"):
        answer = tutor.ask(question)
        assert answer.kind == "off_topic" and answer.refused and not answer.lessons
    assert "can't help" in tutor.ask("recommend a movie").text
    assert "帮不上" in tutor.ask("推荐一部电影").text


def test_empty_question_gets_an_invitation(tutor: Tutor) -> None:
    assert tutor.ask("   ", lang="en").kind == "empty"


def test_solution_requests_get_hints_that_unlock_only_after_a_new_attempt(tutor: Tutor) -> None:
    ctx = ChatContext(lesson_id="backward", step_id="cube", attempts=1)
    first = tutor.ask("just give me the code", context=ctx)
    assert first.refused and first.kind == "hint" and first.hint_level == 1
    assert "Which tensor must be tracked?" in first.text and "Think about this" in first.text
    again = tutor.ask("please just tell me the answer", context=ctx)
    assert again.hint_level == 1 and "next one unlocks" in again.text
    after_run = tutor.ask("直接告诉我答案", context=ctx.model_copy(update={"attempts": 2}))
    assert after_run.hint_level == 2 and "先把结果变成一个数" in after_run.text
    last = tutor.ask("show me the solution", context=ctx.model_copy(update={"attempts": 5}))
    assert last.hint_level == 3 and "last hint" in last.text
    capped = tutor.ask("show me the solution", context=ctx.model_copy(update={"attempts": 6}))
    assert capped.hint_level == 3


def test_hints_the_learner_already_saw_are_not_repeated_as_new(tutor: Tutor) -> None:
    ctx = ChatContext(lesson_id="backward", step_id="cube", hints_unlocked=2, attempts=3)
    assert tutor.ask("what's the answer?", context=ctx).hint_level == 3


def test_a_fresh_tutor_unlocks_at_most_one_hint_level_per_attempt(course: Course) -> None:
    """A new process knows only the persisted hints_unlocked/attempts: asking again there
    repeats the hint already seen until a new attempt is made."""
    seen_one = ChatContext(lesson_id="backward", step_id="cube", hints_unlocked=1, attempts=0)
    again = Tutor(course, catalog_entries=[]).ask("just give me the code", context=seen_one)
    assert again.hint_level == 1 and "next one unlocks" in again.text
    tried = seen_one.model_copy(update={"attempts": 1})
    assert Tutor(course, catalog_entries=[]).ask("答案？", context=tried).hint_level == 2


def test_help_me_write_something_else_is_declined_not_hinted(tutor: Tutor) -> None:
    ctx = ChatContext(lesson_id="backward", step_id="cube", attempts=1)
    for question in ("help me write an email to my landlord", "帮我写一封请假邮件"):
        answer = tutor.ask(question, context=ctx)
        assert answer.kind == "off_topic" and answer.hint_level is None
    assert tutor.ask("help me write this step", context=ctx).kind == "hint"


def test_asking_the_value_of_the_checked_expression_is_refused(tutor: Tutor) -> None:
    ctx = ChatContext(lesson_id="backward", step_id="cube", attempts=1)
    answer = tutor.ask("what should w.grad be at the end?", context=ctx)
    assert answer.kind == "hint" and "12" not in answer.text
    assert tutor.ask("what does w.grad hold after backward?").kind == "answer"


def test_solution_request_without_a_step_still_refuses(tutor: Tutor) -> None:
    answer = tutor.ask("give me the full code")
    assert answer.refused and answer.hint_level is None and "--step" in answer.text


def test_why_is_my_grad_none_answers_about_the_last_run(tutor: Tutor) -> None:
    run = RunResult(
        outcome="ok",
        device="cpu",
        probes=[ProbeResult(expr="x", value=_snap(requires_grad=False, is_leaf=True))],
    )
    ctx = ChatContext(lesson_id="backward", step_id="cube", last_run=run, attempts=1)
    answer = tutor.ask("why is my x.grad None?", context=ctx)
    assert answer.kind == "context"
    assert "does not require grad" in answer.text and "run:x" in answer.sources
    non_leaf = run.model_copy(
        update={
            "probes": [ProbeResult(expr="x", value=_snap(is_leaf=False, grad_fn="MulBackward0"))]
        }
    )
    answer = tutor.ask(
        "为什么我的 x.grad 是 None", context=ctx.model_copy(update={"last_run": non_leaf})
    )
    assert "不是叶子" in answer.text and "MulBackward0" in answer.text


def test_an_error_in_the_last_run_is_explained_with_its_diagnosis(tutor: Tutor) -> None:
    run = RunResult(
        outcome="error",
        device="cpu",
        error=ErrorInfo(
            type="RuntimeError",
            message="grad can be implicitly created only for scalar outputs",
            line=3,
        ),
    )
    diagnosis = Diagnosis(
        id="non-scalar-backward",
        severity="error",
        title=T("backward() on a non-scalar", "对非标量调用 backward()"),
        explanation=T("`z` has 2 elements.", "`z` 有 2 个元素。"),
        fix=T("Reduce `z` first.", "先把 `z` 归约。"),
        lesson_ref="backward/intro",
    )
    ctx = ChatContext(lesson_id="detach", step_id="intro", last_run=run, diagnoses=[diagnosis])
    answer = tutor.ask("what does this error mean?", context=ctx)
    assert "line 3" in answer.text and "Reduce `z` first." in answer.text
    assert "diagnosis:non-scalar-backward" in answer.sources
    assert "backward/intro" in answer.text


def test_composed_answers_never_show_the_current_steps_solution(course: Course) -> None:
    # a reading text that happens to contain the step's solution and expected values
    lesson = course.lesson("backward")
    body = lesson.steps[0].body  # type: ignore[union-attr]
    leaky_reading = lesson.steps[0].model_copy(
        update={
            "body": body
            + T(
                "\n\nFor example `cube = (w ** 3).sum()` gives tensor([12., 75.]).",
                "\n\n例如 `cube = (w ** 3).sum()` 得到 tensor([12., 75.])。",
            )
        }
    )
    leaky = course.model_copy(
        update={
            "lessons": [
                lesson.model_copy(update={"steps": [leaky_reading, *lesson.steps[1:]]}),
                *course.lessons[1:],
            ]
        }
    )
    tutor = Tutor(leaky, catalog_entries=[])
    ctx = ChatContext(lesson_id="backward", step_id="cube")
    answer = tutor.ask("what does backward do with a cube sum?", context=ctx)
    assert answer.redacted
    assert "(w ** 3).sum()" not in answer.text and "75" not in answer.text
    # on another step nothing of this one is secret
    elsewhere = ctx.model_copy(update={"lesson_id": "detach", "step_id": "intro"})
    assert not tutor.ask("what does backward do with a cube sum?", context=elsewhere).redacted
