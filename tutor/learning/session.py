"""The learning session: the state and actions behind the TUI, ``tutor watch`` and
``tutor verify``, with no UI in it.

The faces are thin: every TUI button and key, every save that ``tutor watch`` sees and every
file ``tutor verify`` grades calls one method here, so each interaction can be tested without
a screen. The session holds where the learner is (lesson, step), the code of each step, hints
unlocked, language and device, and does run -> grade -> diagnose -> record progress.

One behaviour for every face:

- every finished run is diagnosed, passing or not: a passing run can still teach (a warning
  torch gave, a pitfall such as ``.data`` in the source), and a run without error costs the
  diagnosis nothing but a look at the source;
- what is graded and diagnosed is the code exactly as the learner sees it, so line numbers
  match their editor; what is kept as the step's code (``save_as``) is the code alone, which
  for an exercise file is the text below its comment header, so the app shows the same code;
- a cancelled run is neither diagnosed nor recorded: the learner stopped it.

Dependencies are passed in (runner, progress store, tutor, grading, diagnosis) so tests can
use fakes. Nothing here imports torch: the runner does the torch work in other processes.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from tutor import syntax_tree
from tutor.course.models import (
    AnswerStep,
    CodeStep,
    Course,
    FixStep,
    Lesson,
    QuizStep,
    Step,
)
from tutor.errors import TutorError
from tutor.i18n import Lang, T, Text
from tutor.learning.messages import msg

if TYPE_CHECKING:  # grading and diagnosis load with the first check, the sandbox's models
    # with the first run: none of them at start-up
    from tutor.diagnosis.models import Diagnosis
    from tutor.grading.models import Verdict
    from tutor.sandbox.models import ProbeResult, RunResult
    from tutor.sandbox.runner import Runner


class ProgressLike(Protocol):
    """What the session needs of :class:`tutor.progress.ProgressStore`."""

    def record_attempt(
        self, step_ref: str, code: str, *, passed: bool, score: float, max_score: float
    ) -> Any: ...
    def passed_steps(self) -> set[str]: ...
    def attempts(self, step_ref: str) -> int: ...
    def last_code(self, step_ref: str) -> str | None: ...
    def save_code(self, step_ref: str, code: str) -> Any: ...
    def set_position(self, lesson_id: str, step_id: str) -> Any: ...
    def position(self) -> Any: ...
    def hints_revealed(self, step_ref: str) -> int: ...
    def set_hints_revealed(self, step_ref: str, n: int) -> Any: ...
    def step(self, step_ref: str) -> Any: ...


class GradingLike(Protocol):
    """The grading API (``tutor.grading``); the module itself satisfies it."""

    def grade_step(
        self, lesson: Lesson, step: Any, code: str, *, runner: Any, device: str = "cpu"
    ) -> Verdict: ...
    def grade_answer(
        self, lesson: Lesson, step: AnswerStep, typed: str, *, runner: Any, device: str = "cpu"
    ) -> Verdict: ...
    def grade_quiz(
        self, lesson: Lesson, step: QuizStep, selected: Sequence[int], *, reveal: bool = ...
    ) -> Verdict: ...


Diagnose = Callable[["RunResult", str], "list[Diagnosis]"]


class NotRunnable(TutorError):
    """The current step has nothing to run (e.g. a reading step)."""


class UnknownDevice(TutorError):
    """A device was picked that the sandbox did not report."""


class UnknownLesson(TutorError):
    """A lesson or step id that the course does not have."""


@dataclass(frozen=True)
class Attempt:
    """One graded submission of the current step, with what explains it."""

    step_ref: str
    verdict: Verdict
    diagnoses: list[Diagnosis] = field(default_factory=list)
    cancelled: bool = False
    diagnosis_error: TutorError | None = None
    """Why the run could not be diagnosed (the verdict stands without it)."""
    run_facts: list[Text] = field(default_factory=list)
    """For a wrong answer no check explains: what the instrumented re-run shows."""

    @property
    def run(self) -> RunResult | None:
        return self.verdict.run


@dataclass(frozen=True)
class GraphView:
    """The autograd graph of one expression after running the learner's code."""

    expr: str
    run: RunResult
    probe: ProbeResult | None


OutputListener = Callable[[str], None]
"""Called with each chunk of what the learner's run prints, from the runner's thread."""


class CancellableRunner:
    """Passes a cancel event to every run, and an output listener to the learner's own run,
    so grading (which knows nothing of either) runs through a runner the UI can stop and
    watch. Only the first run of ``learner_code`` streams: grading runs the reference
    solution and hidden inputs through the same runner, and their output must never reach
    the screen. A runner that cannot stream (no ``on_output``) gets no listener."""

    def __init__(
        self,
        inner: Runner,
        cancel: threading.Event,
        *,
        learner_code: str | None = None,
        on_output: OutputListener | None = None,
    ) -> None:
        self._inner = inner
        self._cancel = cancel
        self._accepts_cancel = _accepts_keyword(inner.run, "cancel")
        self._lock = threading.Lock()
        self._listener: tuple[str, OutputListener] | None = None
        if on_output is not None and learner_code is not None and _accepts_keyword(
            inner.run, "on_output", strict=True
        ):
            self._listener = (learner_code, on_output)

    def run(self, code: str, **options: Any) -> RunResult:
        """The inner runner's run of ``code`` with ``options`` (see :class:`Runner`), the
        cancel event and, for the learner's own run, the output listener added."""
        if self._accepts_cancel:
            options.setdefault("cancel", self._cancel)
        with self._lock:  # grading may run several at once
            listener, self._listener = self._listener, None
            if listener is not None and listener[0] != code:
                self._listener, listener = listener, None
        if listener is not None:
            options["on_output"] = listener[1]
        return self._inner.run(code, **options)

    def devices(self) -> list[str]:
        return self._inner.devices()

    def __getattr__(self, name: str) -> Any:  # resolve_device and friends
        return getattr(self._inner, name)


def _accepts_keyword(func: Callable[..., Any], name: str, *, strict: bool = False) -> bool:
    """Whether ``func`` takes the keyword ``name`` (``strict``: by name, not only through
    ``**kwargs``, which may pass it on to something that does not)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or (
        not strict and any(p.kind is p.VAR_KEYWORD for p in params.values()))


def step_ref(lesson: Lesson, step: Step) -> str:
    return f"{lesson.id}/{step.id}"


def assigned_names(code: str) -> list[str]:
    """Names the code assigns at top level, in order: the tensors a learner may pick to see
    the graph of. Empty when the code does not parse."""
    try:
        tree = syntax_tree.parse(code)
    except SyntaxError:
        return []
    names: list[str] = []

    def add(target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if target.id not in names:
                names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            add(node.target)
        elif isinstance(node, (ast.With, ast.For)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        add(target)
    return names


GRADED_KINDS = (CodeStep, FixStep, QuizStep, AnswerStep)
RUNNABLE_KINDS = (CodeStep, FixStep)


@dataclass(frozen=True)
class HintShown:
    """What asking for a hint gave: the hints unlocked so far, the newest last, of ``total``
    (the app shows them all, the shell the newest: "Hint 2/3")."""

    shown: tuple[Text, ...]
    total: int
    again: bool = False
    """Every hint had been shown already: nothing new was unlocked."""

    @property
    def number(self) -> int:
        return len(self.shown)

    @property
    def text(self) -> Text:
        return self.shown[-1]


class LearningSession:
    """Where the learner is and what they can do there. Thread-safe enough for one UI:
    runs happen in a worker thread, everything else on the UI thread."""

    def __init__(
        self,
        course: Course,
        runner: Runner,
        store: ProgressLike,
        *,
        tutor: Any = None,
        lang: Lang = "en",
        device: str = "cpu",
        grading: GradingLike | None = None,
        diagnose: Diagnose | None = None,
        learner: str | None = None,
    ) -> None:
        """``learner``: whose choice order quizzes are shown in (tutor.course.quiz); None
        shows them in the lesson's order."""
        if not course.lessons:
            raise TutorError("the course has no lessons", hint="check the --lessons folder")
        self.course = course
        self.runner = runner
        self.store = store
        self.tutor = tutor
        self.lang: Lang = lang
        self.device = device
        self.known_devices: list[str] | None = None
        self._grading = grading
        self._diagnose = diagnose
        self.learner = learner
        self.lesson: Lesson = course.lessons[0]
        self.step_index = 0
        self.last_attempt: Attempt | None = None
        self.resume()

    # ------------------------------------------------------------------ dependencies

    @property
    def grading(self) -> GradingLike:
        # Imported on first use so the UI starts without loading grading's dependencies.
        if self._grading is None:
            self._grading = cast("GradingLike", importlib.import_module("tutor.grading"))
        return self._grading

    def diagnose(self, result: RunResult, code: str, *, wrong: bool = False) -> list[Diagnosis]:
        """A run that raised, or that ran but gave a wrong answer (``wrong``: a silent bug is
        the likely cause), is diagnosed from evidence (an instrumented re-run, fixes tried
        before they are shown); a run that passed from its result and source alone, so a
        right answer pays nothing for the re-run."""
        return self.diagnose_run(result, code, wrong=wrong)[0]

    def diagnose_run(self, result: RunResult, code: str, *, wrong: bool = False
                     ) -> tuple[list[Diagnosis], list[Text]]:
        """:meth:`diagnose`, and, for a wrong answer from a run in which no check found a
        mistake, what the instrumented re-run shows (its losses, what each optimizer moved,
        the first nan): facts to compare with what the program should do, instead of a
        bare "nothing found"."""
        if self._diagnose is not None:
            return list(self._diagnose(result, code)), []
        if result.outcome == "error" or (wrong and result.outcome == "ok"):
            reasoning = importlib.import_module("tutor.diagnosis.reasoning")
            found, evidence = reasoning.diagnose_with_evidence(code, result, self.runner,
                                                               device=self.device)
            if found or evidence is None or result.outcome != "ok":
                return list(found), []
            summary = importlib.import_module("tutor.diagnosis.run_summary")
            return [], list(summary.run_summary(evidence))
        return list(importlib.import_module("tutor.diagnosis").explain(result, code)), []

    # ------------------------------------------------------------------ position

    @property
    def step(self) -> Step:
        """The current step as the learner sees it (a quiz's choices in their order)."""
        return self.as_shown(self.lesson, self.lesson.steps[self.step_index])

    def as_shown(self, lesson: Lesson, step: Step) -> Step:
        """``step`` as the learner sees it: a quiz's choices in their order."""
        if isinstance(step, QuizStep) and self.learner is not None:
            from tutor.course.quiz import shown_choices

            shown = [c for _, c in shown_choices(step, self.learner, step_ref(lesson, step))]
            return step.model_copy(update={"choices": shown})
        return step

    @property
    def ref(self) -> str:
        return step_ref(self.lesson, self.step)

    def resume(self) -> None:
        """Go to where the learner left off (from the store), else the first step."""
        position = self.store.position()
        if position:
            lesson_id, step_id = _unpack_position(position)
            try:
                self.goto(lesson_id, step_id)
                return
            except UnknownLesson:
                pass  # the course changed since; start at the top
        self.lesson, self.step_index = self.course.lessons[0], 0

    def goto(self, lesson_id: str, step_id: str | None = None) -> Step:
        try:
            lesson = self.course.lesson(lesson_id)
        except KeyError:
            raise UnknownLesson(f"no lesson {lesson_id!r} in this course") from None
        index = 0
        if step_id is not None:
            ids = [s.id for s in lesson.steps]
            if step_id not in ids:
                raise UnknownLesson(f"no step {step_id!r} in lesson {lesson_id!r}")
            index = ids.index(step_id)
        self.lesson, self.step_index = lesson, index
        self.last_attempt = None
        self.store.set_position(lesson.id, self.step.id)
        self._mark_read()
        return self.step

    def _mark_read(self) -> None:
        """A reading counts as read (passed) once shown, so a lesson reopens past it."""
        from tutor.course.quiz import read_on_show

        if read_on_show(self.step) and not self.step_passed(self.lesson, self.step):
            self.store.record_attempt(self.ref, "", passed=True, score=0.0, max_score=0.0)

    def open_lesson(self, lesson_id: str) -> Step:
        """Open a lesson at its first step not yet passed (the first step if all are)."""
        try:
            lesson = self.course.lesson(lesson_id)
        except KeyError:
            raise UnknownLesson(f"no lesson {lesson_id!r} in this course") from None
        from tutor.course.quiz import first_unread_step

        passed = self.store.passed_steps()
        done = {s.id for s in lesson.steps if step_ref(lesson, s) in passed}
        if len(done) == len(lesson.steps):
            return self.goto(lesson_id)  # all done: from the top, to review
        return self.goto(lesson_id, lesson.steps[first_unread_step(lesson, done)].id)

    def next_step(self) -> Step | None:
        """The next step, crossing into the next lesson; None at the end of the course."""
        if self.step_index + 1 < len(self.lesson.steps):
            return self.goto(self.lesson.id, self.lesson.steps[self.step_index + 1].id)
        lessons = self.course.lessons
        index = lessons.index(self.lesson)
        if index + 1 < len(lessons):
            return self.goto(lessons[index + 1].id)
        return None

    def prev_step(self) -> Step | None:
        if self.step_index > 0:
            return self.goto(self.lesson.id, self.lesson.steps[self.step_index - 1].id)
        lessons = self.course.lessons
        index = lessons.index(self.lesson)
        if index > 0:
            previous = lessons[index - 1]
            return self.goto(previous.id, previous.steps[-1].id)
        return None

    # ------------------------------------------------------------------ progress

    def step_passed(self, lesson: Lesson, step: Step) -> bool:
        return step_ref(lesson, step) in self.store.passed_steps()

    def lesson_progress(self, lesson: Lesson, passed: set[str] | None = None) -> tuple[int, int]:
        """(passed, gradable) steps of a lesson."""
        passed = self.store.passed_steps() if passed is None else passed
        graded = [s for s in lesson.steps if isinstance(s, GRADED_KINDS)]
        done = sum(1 for s in graded if step_ref(lesson, s) in passed)
        return done, len(graded)

    def attempts(self) -> int:
        return self.store.attempts(self.ref)

    # ------------------------------------------------------------------ code

    def starter_code(self, lang: Lang | None = None) -> str:
        """The step's starting code in ``lang`` (default: the session's language)."""
        step = self.step
        if isinstance(step, RUNNABLE_KINDS):
            return step.starter_for(lang or self.lang)
        if isinstance(step, AnswerStep):
            return step.code
        return ""

    def is_starter(self, code: str) -> bool:
        """Is ``code`` the current step's starter, untouched, in either language? The UI
        reloads such code when the language changes; edited code is left as it is."""
        step = self.step
        return isinstance(step, RUNNABLE_KINDS) and step.is_starter(code)

    def code(self) -> str:
        """The code to show for the current step: the learner's last code, else the starter.

        Saved code that is an untouched starter (e.g. after a reset) is shown in the
        session's language; anything the learner changed is shown exactly as they left it."""
        step = self.step
        if isinstance(step, RUNNABLE_KINDS):
            saved = self.store.last_code(self.ref)
            if saved is not None and not step.is_starter(saved):
                return saved
        return self.starter_code()

    def previous_choices(self) -> list[int]:
        """The choices of the learner's last answer to the current quiz (none if it was
        never answered): shown again when the learner comes back, after a restart too."""
        step = self.step
        if not isinstance(step, QuizStep):
            return []
        saved = self.store.last_code(self.ref) or ""
        picked = {int(part) for part in saved.split(",") if part.strip().isdigit()}
        return sorted(i for i in picked if i < len(step.choices))

    def previous_answer(self) -> str:
        """The learner's last typed answer to the current answer step ("" if none)."""
        if not isinstance(self.step, AnswerStep):
            return ""
        return self.store.last_code(self.ref) or ""

    def save_code(self, code: str) -> None:
        if isinstance(self.step, RUNNABLE_KINDS):
            self.store.save_code(self.ref, code)

    def reset_code(self) -> str:
        """Back to the starter code in the session's language (saved, so a restart shows
        the starter too, not the code it replaced)."""
        starter = self.starter_code()
        self.save_code(starter)
        return starter

    # ------------------------------------------------------------------ hints

    def hints_shown(self, ref: str | None = None) -> int:
        """Hints unlocked for a step (default: the current one)."""
        ref, step = self._step_of(ref)
        return min(self.store.hints_revealed(ref), len(step.hints))

    def visible_hints(self, ref: str | None = None) -> list[Text]:
        _, step = self._step_of(ref)
        return list(step.hints[: self.hints_shown(ref)])

    def next_hint(self, ref: str | None = None) -> HintShown | None:
        """Ask for a hint on a step (default: the current one): the next is unlocked; once
        all are, they are given ``again``; None when the step has none."""
        ref, step = self._step_of(ref)
        if not step.hints:
            return None
        again = self.reveal_hint(ref) is None
        return HintShown(tuple(self.visible_hints(ref)), len(step.hints), again=again)

    def reveal_hint(self, ref: str | None = None) -> Text | None:
        """Unlock the next hint of a step (default: the current one); None when every hint
        is already shown. Remembered in the store, so the app and the shell share it."""
        ref, step = self._step_of(ref)
        shown = self.hints_shown(ref)
        if shown >= len(step.hints):
            return None
        self.store.set_hints_revealed(ref, shown + 1)
        return step.hints[shown]

    def _step_of(self, ref: str | None) -> tuple[str, Step]:
        if ref is None:
            return self.ref, self.step
        try:
            _, step = self.course.find(ref)
        except KeyError:
            raise UnknownLesson(f"no step {ref!r} in this course") from None
        return ref, step

    # ------------------------------------------------------------------ running

    def run(
        self,
        code: str,
        *,
        cancel: threading.Event | None = None,
        save_as: str | None = None,
        on_output: OutputListener | None = None,
    ) -> Attempt:
        """Submit the code of the current code/fix step (see :meth:`submit`)."""
        self.last_attempt = self.submit(
            self.lesson, self.step, code, cancel=cancel, save_as=save_as, on_output=on_output
        )
        return self.last_attempt

    def submit(
        self,
        lesson: Lesson,
        step: Step,
        code: str,
        *,
        cancel: threading.Event | None = None,
        save_as: str | None = None,
        record: bool = True,
        on_output: OutputListener | None = None,
    ) -> Attempt:
        """Run the code of a code/fix step, grade it, diagnose it, record the attempt.

        ``code`` is graded and diagnosed as given (line numbers are the learner's);
        ``save_as`` is what is kept as the step's code (default: ``code``). ``record=False``
        grades without counting an attempt (a text already graded once). ``on_output`` is
        given what the learner's run prints while it runs. Safe to call from several
        threads at once; the position does not change."""
        ref = step_ref(lesson, step)
        if not isinstance(step, RUNNABLE_KINDS):
            raise NotRunnable(
                f"step {ref} is a {step.kind} step; there is no code to run",
                hint="use the controls in the lesson pane",
            )
        kept = code if save_as is None else save_as
        if record:
            self.store.save_code(ref, kept)  # kept even if grading dies half-way
        cancel = cancel or threading.Event()
        runner = CancellableRunner(self.runner, cancel, learner_code=code, on_output=on_output)
        verdict = self.grading.grade_step(lesson, step, code, runner=runner, device=self.device)
        cancelled = cancel.is_set()
        diagnoses: list[Diagnosis] = []
        run_facts: list[Text] = []
        diagnosis_error: TutorError | None = None
        if verdict.run is not None and not cancelled:
            try:
                guard = importlib.import_module("tutor.chat.guardrails")  # the chat's own rule
                found, run_facts = self.diagnose_run(verdict.run, code,
                                                     wrong=not verdict.passed)
                diagnoses = guard.shown_diagnoses(found, step)
            except TutorError as exc:  # the verdict stands; say why there is no diagnosis
                diagnosis_error = exc
        if record and not cancelled:
            self.store.record_attempt(
                ref, kept, passed=verdict.passed, score=verdict.score, max_score=verdict.max_score
            )
        return Attempt(ref, verdict, diagnoses, cancelled=cancelled,
                       diagnosis_error=diagnosis_error, run_facts=run_facts)

    def answer_quiz(self, selected: Sequence[int], *, gave_up: bool = False) -> Attempt:
        """Grade the picked choices (positions as shown); the right answer is named only
        from the second wrong try on, or when the learner gives up."""
        step = self.lesson.steps[self.step_index]
        if not isinstance(step, QuizStep):
            raise NotRunnable(f"step {self.ref} is not a quiz")
        self.last_attempt = self.submit_quiz(self.lesson, step, selected, gave_up=gave_up)
        return self.last_attempt

    def submit_quiz(self, lesson: Lesson, step: QuizStep, selected: Sequence[int], *,
                    gave_up: bool = False, record: bool = True) -> Attempt:
        """Grade picked choices (positions in the learner's order) of any quiz, as
        :meth:`submit` does code (own-editor quiz files): the position does not change;
        ``record=False`` grades without counting an attempt."""
        from tutor.course.quiz import reveals_answer

        ref = step_ref(lesson, step)
        shown = self.as_shown(lesson, step)
        assert isinstance(shown, QuizStep)
        tries = self.store.attempts(ref) + (1 if record else 0)
        verdict = self.grading.grade_quiz(lesson, shown, list(selected),
                                          reveal=reveals_answer(tries, gave_up=gave_up))
        if record:
            self.store.record_attempt(
                ref,
                ",".join(str(i) for i in selected),
                passed=verdict.passed,
                score=verdict.score,
                max_score=verdict.max_score,
            )
        return Attempt(ref, verdict)

    def give_up(self, selected: Sequence[int] = ()) -> Attempt:
        """The learner gives up on the current quiz: the answer is shown (with the picks, if
        any, judged) and the attempt recorded as not passed, so the review offers it again."""
        lesson, step, ref = self.lesson, self.step, self.ref
        if not isinstance(step, QuizStep):
            raise NotRunnable(f"step {ref} is not a quiz")
        if selected:
            return self.answer_quiz(selected, gave_up=True)
        right = [i for i, choice in enumerate(step.choices) if choice.correct]
        shown = self.grading.grade_quiz(lesson, step, right, reveal=True)
        verdict = shown.model_copy(update={
            "status": "fail", "score": 0.0, "message": msg("gave_up")})
        self.store.record_attempt(ref, "", passed=False, score=0.0, max_score=verdict.max_score)
        self.last_attempt = Attempt(ref, verdict)
        return self.last_attempt

    def answer_value(self, typed: str, *, cancel: threading.Event | None = None) -> Attempt:
        """Grade a typed value (e.g. ``tensor([1., 3.])``) against torch's truth."""
        lesson, step, ref = self.lesson, self.step, self.ref
        if not isinstance(step, AnswerStep):
            raise NotRunnable(f"step {ref} does not take a typed answer")
        from tutor.grading.models import Verdict

        runner = CancellableRunner(self.runner, cancel or threading.Event())
        try:
            verdict = self.grading.grade_answer(
                lesson, step, typed, runner=runner, device=self.device
            )
        except (TutorError, ValueError) as exc:  # an answer that does not parse
            verdict = Verdict(
                step=ref,
                status="not_gradable",
                score=0,
                max_score=1,
                run=None,
                message=T(
                    f"Could not read your answer: {exc}",
                    f"无法读取你的答案：{exc}",
                ),
            )
        self.store.record_attempt(
            ref, typed, passed=verdict.passed, score=verdict.score, max_score=verdict.max_score
        )
        self.last_attempt = Attempt(ref, verdict)
        return self.last_attempt

    def graph_of(
        self, code: str, expr: str, *, cancel: threading.Event | None = None
    ) -> GraphView:
        """Run the code and return the autograd graph behind ``expr``."""
        expr = expr.strip()
        if not expr:
            raise TutorError("name a tensor to draw its graph, e.g. y")
        from tutor.sandbox.models import Probe

        runner = CancellableRunner(self.runner, cancel or threading.Event())
        result = runner.run(code, device=self.device, probes=[Probe(expr=expr, graph=True)])
        return GraphView(expr, result, result.probe(expr))

    # ------------------------------------------------------------------ device, language

    def available_devices(self) -> list[str]:
        """Ask the runner which devices exist (slow the first time: call off the UI thread)."""
        devices = list(self.runner.devices()) or ["cpu"]
        self.known_devices = devices
        return devices

    def set_device(self, device: str) -> None:
        known = self.known_devices or ["cpu"]
        if device not in known:
            raise UnknownDevice(
                f"device {device!r} is not available here",
                hint="available: " + ", ".join(known),
            )
        self.device = device

    def set_lang(self, lang: Lang) -> None:
        if lang not in ("en", "zh"):
            raise TutorError(f"unknown language {lang!r}", hint="use en or zh")
        self.lang = lang

    def toggle_lang(self) -> Lang:
        self.set_lang("zh" if self.lang == "en" else "en")
        return self.lang

    # ------------------------------------------------------------------ chat

    def ask(self, question: str, code: str | None = None) -> Any:
        """Ask the tutor about the current step; returns the chat's ``Answer``."""
        if self.tutor is None:
            raise TutorError("the tutor chat is not available in this session")
        context = self._chat_context(code)
        answer = self.tutor.ask(question, lang=self.lang, context=context)
        level = getattr(answer, "hint_level", None)
        if isinstance(level, int) and level > self.hints_shown():
            # a hint given in the chat counts as unlocked, so the hints pane shows it too
            self.store.set_hints_revealed(self.ref, min(level, len(self.step.hints)))
        return answer

    def _chat_context(self, code: str | None) -> Any:
        try:
            chat = importlib.import_module("tutor.chat")
            context_type = chat.ChatContext
        except (ImportError, AttributeError):
            return None
        attempt = self.last_attempt
        return context_type(
            lesson_id=self.lesson.id,
            step_id=self.step.id,
            code=code if code is not None else self.code(),
            last_run=attempt.run if attempt else None,
            diagnoses=list(attempt.diagnoses) if attempt else [],
            hints_unlocked=self.hints_shown(),
            attempts=self.attempts(),
        )


def _unpack_position(position: Any) -> tuple[str, str | None]:
    """The store's position as (lesson_id, step_id), whatever shape it comes in."""
    if isinstance(position, str):
        lesson_id, _, step = position.partition("/")
        return lesson_id, step or None
    if isinstance(position, (tuple, list)):
        return str(position[0]), (str(position[1]) if len(position) > 1 and position[1] else None)
    step_id = getattr(position, "step_id", None)
    return str(getattr(position, "lesson_id", None)), (str(step_id) if step_id else None)

