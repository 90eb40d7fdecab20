"""The learning session without a screen: every TUI action is one of these calls."""

from __future__ import annotations

import threading

import pytest
from tui_fakes import HANG, FakeGrading, FakeRunner, FakeTutor, fake_diagnose

from tutor.course.models import Course
from tutor.errors import TutorError
from tutor.learning import (
    CancellableRunner,
    LearningSession,
    NotRunnable,
    UnknownDevice,
    UnknownLesson,
    assigned_names,
)
from tutor.progress import ProgressStore


def make(course: Course, store: ProgressStore, **kw) -> LearningSession:
    kw.setdefault("runner", FakeRunner(devices=["cpu", "cuda:0"]))
    return LearningSession(
        course,
        kw.pop("runner"),
        store,
        grading=FakeGrading(),
        diagnose=fake_diagnose,
        **kw,
    )


def test_starts_at_first_step_and_walks_the_course(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    assert session.ref == "mini-basics/intro"
    refs = [session.ref]
    while session.next_step() is not None:
        refs.append(session.ref)
    expected = [f"{lesson.id}/{step.id}" for lesson in course.lessons for step in lesson.steps]
    assert refs == expected
    assert session.next_step() is None  # end of the course stays put
    assert session.ref == expected[-1]
    session.prev_step()
    assert session.ref == expected[-2]
    assert store.position() == tuple(expected[-2].split("/"))


def test_open_lesson_goes_to_first_unpassed_step(course: Course, store: ProgressStore) -> None:
    store.record_attempt("mini-basics/first-backward", "x", passed=True, score=1, max_score=1)
    session = make(course, store)
    session.open_lesson("mini-basics")
    assert session.ref == "mini-basics/intro"  # issue 21: the first unread step, a reading
    session.open_lesson("mini-basics")  # shown once, the reading counts as read
    assert session.ref == "mini-basics/who-tracks"
    with pytest.raises(UnknownLesson):
        session.open_lesson("nope")
    with pytest.raises(UnknownLesson):
        session.goto("mini-basics", "nope")


def test_resume_from_store_and_from_a_stale_position(course: Course, store: ProgressStore) -> None:
    store.set_position("mini-graph", "grad-function")
    assert make(course, store).ref == "mini-graph/grad-function"
    store.set_position("lesson-that-was-removed", "x")
    assert make(course, store).ref == "mini-basics/intro"


def test_code_is_starter_then_saved_then_reset(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "first-backward")
    starter = session.step.starter  # type: ignore[union-attr]
    assert session.code() == starter
    session.save_code("y = 1\n")
    assert session.code() == "y = 1\n"
    assert store.last_code("mini-basics/first-backward") == "y = 1\n"
    assert session.reset_code() == starter
    assert session.code() == starter


def test_run_pass_records_attempt(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "first-backward")
    solution = session.step.solution  # type: ignore[union-attr]
    attempt = session.run(solution)
    assert attempt.verdict.passed
    assert attempt.diagnoses == []
    assert "mini-basics/first-backward" in store.passed_steps()
    assert session.attempts() == 1
    assert session.lesson_progress(course.lessons[0]) == (1, 3)


def test_run_error_is_diagnosed_and_counted(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "first-backward")
    attempt = session.run("import torch\nraise RuntimeError('boom')\n")
    assert attempt.verdict.status == "error"
    assert attempt.run is not None and attempt.run.error is not None
    assert [d.id for d in attempt.diagnoses] == ["non-scalar-backward"]
    assert attempt.diagnoses[0].line == 2
    assert session.attempts() == 1
    assert "mini-basics/first-backward" not in store.passed_steps()


def test_cancelled_run_is_not_an_attempt(course: Course, store: ProgressStore) -> None:
    runner = FakeRunner()
    session = make(course, store, runner=runner)
    session.goto("mini-basics", "first-backward")
    cancel = threading.Event()
    result: list = []
    worker = threading.Thread(target=lambda: result.append(session.run(HANG, cancel=cancel)))
    worker.start()
    assert runner.started.wait(5)
    cancel.set()
    worker.join(5)
    assert not worker.is_alive()
    attempt = result[0]
    assert attempt.cancelled
    assert attempt.run.error.type == "Cancelled"
    assert attempt.diagnoses == []
    assert session.attempts() == 0


def test_reading_and_quiz_steps_have_nothing_to_run(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    with pytest.raises(NotRunnable):
        session.run("print(1)")
    with pytest.raises(NotRunnable):
        session.answer_quiz([0])
    with pytest.raises(NotRunnable):
        session.answer_value("1")


def test_quiz_and_answer(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "who-tracks")
    assert not session.answer_quiz([0]).verdict.passed
    assert session.answer_quiz([1]).verdict.passed
    assert session.attempts() == 2
    session.goto("mini-basics", "grad-value")
    bad = session.answer_value("what")  # does not parse: not gradable, clear message
    assert bad.verdict.status == "not_gradable"
    assert "what" in bad.verdict.message.en
    assert session.answer_value("tensor([1., 1.])").verdict.passed
    assert "mini-basics/grad-value" in store.passed_steps()


def test_last_answers_come_back_with_the_step(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "who-tracks")
    assert session.previous_choices() == []
    session.answer_quiz([1])
    session.goto("mini-basics", "grad-value")
    assert session.previous_choices() == []  # not a quiz
    session.answer_value("tensor([1., 1.])")
    again = make(course, store)  # a restart
    again.goto("mini-basics", "who-tracks")
    assert again.previous_choices() == [1] and again.previous_answer() == ""
    again.goto("mini-basics", "grad-value")
    assert again.previous_answer() == "tensor([1., 1.])"
    store.record_attempt("mini-basics/who-tracks", "7,x,0", passed=False, score=0, max_score=1)
    again.goto("mini-basics", "who-tracks")
    assert again.previous_choices() == [0]  # what no longer fits the choices is dropped


def test_hints_one_at_a_time_and_kept(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    session.goto("mini-basics", "first-backward")
    assert session.visible_hints() == []
    first = session.reveal_hint()
    assert first is not None and first == session.step.hints[0]
    assert session.visible_hints() == [first]
    session.reveal_hint()
    assert session.reveal_hint() is None  # two hints, no third
    assert store.hints_revealed("mini-basics/first-backward") == 2
    session.goto("mini-basics", "intro")
    assert session.reveal_hint() is None  # no hints on this step


def test_devices_and_language(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    with pytest.raises(UnknownDevice):
        session.set_device("cuda:0")  # not known yet: only cpu
    assert session.available_devices() == ["cpu", "cuda:0"]
    session.set_device("cuda:0")
    session.goto("mini-basics", "first-backward")
    session.run("print(1)")
    assert session.runner.calls[-1]["device"] == "cuda:0"  # type: ignore[attr-defined]
    with pytest.raises(UnknownDevice, match="available: cpu, cuda:0"):
        session.set_device("mps")
    assert session.toggle_lang() == "zh"
    with pytest.raises(TutorError):
        session.set_lang("fr")  # type: ignore[arg-type]


def test_graph_of_a_picked_tensor(course: Course, store: ProgressStore) -> None:
    session = make(course, store)
    view = session.graph_of("x = 1\nz = x\n", "z")
    assert view.probe is not None and view.probe.graph is not None
    assert view.probe.graph.nodes[0].name == "SumBackward0"
    call = session.runner.calls[-1]  # type: ignore[attr-defined]
    assert call["probes"][0].graph is True
    with pytest.raises(TutorError):
        session.graph_of("x = 1", "  ")


def test_ask_passes_context(course: Course, store: ProgressStore) -> None:
    tutor = FakeTutor()
    session = make(course, store, tutor=tutor, lang="zh")
    session.goto("mini-basics", "first-backward")
    session.run("raise ValueError\n")
    answer = session.ask("what is grad?", code="raise ValueError\n")
    assert "梯度" in answer.text
    question, lang, context = tutor.questions[-1]
    assert question == "what is grad?"
    assert lang == "zh"
    assert context.step_id == "first-backward"
    assert context.attempts == 1
    assert context.diagnoses and context.last_run is not None
    with pytest.raises(TutorError):
        make(course, store).ask("hello")


def test_cancellable_runner_only_passes_cancel_when_accepted() -> None:
    class NoCancel:
        def __init__(self) -> None:
            self.kwargs: dict = {}

        def run(self, code, *, device="cpu", probes=(), limits=None):
            self.kwargs = {"device": device}
            return "ran"

        def devices(self):
            return ["cpu"]

    inner = NoCancel()
    assert CancellableRunner(inner, threading.Event()).run("x") == "ran"
    fake = FakeRunner()
    event = threading.Event()
    event.set()
    result = CancellableRunner(fake, event).run(HANG)
    assert result.error is not None and result.error.type == "Cancelled"


def test_assigned_names() -> None:
    code = (
        "import torch\nx = torch.ones(2)\ny, z = x, x\nwith torch.no_grad():\n    w = x\nx += 1\n"
    )
    assert assigned_names(code) == ["x", "y", "z", "w"]
    assert assigned_names("def (:") == []


def test_hint_given_in_chat_counts_as_unlocked(course: Course, store: ProgressStore) -> None:
    class HintingTutor(FakeTutor):
        def ask(self, question, *, lang, context=None):
            answer = super().ask(question, lang=lang, context=context)
            return answer.model_copy(update={"hint_level": 1})

    session = make(course, store, tutor=HintingTutor())
    session.goto("mini-basics", "first-backward")
    session.ask("hint please")
    assert session.hints_shown() == 1
    assert session.reveal_hint() == session.step.hints[1]



def test_giving_up_shows_the_answer_and_does_not_pass(course: Course, store: ProgressStore) -> None:
    """Issue 21 section 3: a learner may give up on a quiz; the answer is named then (it is
    otherwise kept back until the second wrong try), and the question is not passed."""
    session = LearningSession(course, FakeRunner(), store)  # the real quiz grading
    session.goto("mini-basics", "who-tracks")
    step = session.step
    right = next(c for c in step.choices if c.correct)  # type: ignore[union-attr]
    first = session.answer_quiz([0])  # wrong, first try: the answer is kept back
    assert not first.verdict.passed
    assert not any(right.text.en in (c.message.en if c.message else "")
                   for c in first.verdict.checks)
    verdict = session.give_up().verdict
    assert not verdict.passed and verdict.score == 0
    assert verdict.message is not None and "gave up" in verdict.message.en
    assert any(right.text.en in c.label.en for c in verdict.checks), verdict.checks
    assert session.attempts() == 2
    assert "mini-basics/who-tracks" not in store.passed_steps()
    picked = session.give_up([0]).verdict  # with a pick: it is judged, the answer named
    assert not picked.passed
    assert any(right.text.en in (c.message.en if c.message else "") for c in picked.checks)
    session.goto("mini-basics", "intro")
    with pytest.raises(NotRunnable):
        session.give_up()
