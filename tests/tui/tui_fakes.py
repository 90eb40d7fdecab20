"""Test doubles for the TUI: a runner with canned results, grading and diagnosis that follow
simple visible rules, and a tutor. They make Pilot and snapshot tests deterministic where
torch is not the point (the real sandbox is used in the tests marked ``slow``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from tutor.chat.models import Answer, Source
from tutor.course.models import AnswerStep, Course, Lesson, QuizStep
from tutor.diagnosis.models import Diagnosis
from tutor.grading.models import CheckResult, Verdict
from tutor.i18n import T
from tutor.learning import LearningSession
from tutor.sandbox.models import (
    ErrorInfo,
    FrameInfo,
    Graph,
    GraphNode,
    Limits,
    Probe,
    ProbeResult,
    RunResult,
    TensorSnapshot,
)
from tutor.settings import SettingsStore
from tutor.tui.app import TutorApp

HANG = "while True"
"""Code containing this blocks in the fake runner until cancelled (a hanging run)."""
CRASH = "os.abort()"
HOG = "torch.ones(10**12)"
"""A line that runs out of memory: the sandbox stops the run and says where it was."""


def _tensor(grad_fn: str | None) -> TensorSnapshot:
    return TensorSnapshot(
        shape=[2],
        dtype="torch.float32",
        device="cpu",
        requires_grad=True,
        is_leaf=grad_fn is None,
        grad_fn=grad_fn,
        numel=2,
        values=[3.0, 3.0],
    )


GRAPH = Graph(
    root=1,
    nodes=[
        GraphNode(id=1, name="SumBackward0", next=[2]),
        GraphNode(id=2, name="AddBackward0", next=[3]),
        GraphNode(id=3, name="AccumulateGrad", leaf_shape=[2], leaf_name="x"),
    ],
)


class FakeRunner:
    """Canned results: ``raise`` in the code gives a RuntimeError on that line, HANG blocks
    until the cancel event is set, CRASH dies from SIGABRT; anything else runs fine and
    "prints" the lines that start with ``print``; HOG runs out of memory. Records every call."""

    def __init__(self, devices: Sequence[str] = ("cpu",), device_delay: float = 0.0) -> None:
        self._devices = list(devices)
        self._device_delay = device_delay
        self.calls: list[dict[str, Any]] = []
        self.started = threading.Event()

    def devices(self) -> list[str]:
        if self._device_delay:
            threading.Event().wait(self._device_delay)
        return list(self._devices)

    def run(
        self,
        code: str,
        *,
        device: str = "cpu",
        probes: Sequence[str | Probe] = (),
        limits: Limits | None = None,
        cancel: threading.Event | None = None,
        instrument: bool = False,
    ) -> RunResult:
        self.calls.append({"code": code, "device": device, "probes": list(probes)})
        self.started.set()
        if HANG in code:
            assert cancel is not None, "a hanging run needs a cancel event"
            if not cancel.wait(10):
                return RunResult(outcome="timeout", device=device, duration_ms=10_000)
            return RunResult(
                outcome="timeout",
                device=device,
                error=ErrorInfo(type="Cancelled", message="cancelled by the learner"),
            )
        if CRASH in code:
            return RunResult(outcome="crashed", device=device, signal=6)
        lines = code.splitlines()
        for number, line in enumerate(lines, start=1):
            if HOG in line:
                return RunResult(outcome="memory", device=device, error=ErrorInfo(
                    type="MemoryError", message="the code used more than 2048 MB and was "
                    "stopped", line=number, source_line=line.strip(),
                    traceback=[FrameInfo(line=number, function="<module>", source=line)]))
        for number, line in enumerate(lines, start=1):
            if line.strip().startswith("raise"):
                return RunResult(
                    outcome="error",
                    device=device,
                    stdout="before the error\n",
                    error=ErrorInfo(
                        type="RuntimeError",
                        message="grad can be implicitly created only for scalar outputs",
                        line=number,
                        source_line=line,
                        traceback=[FrameInfo(line=number, function="<module>", source=line)],
                    ),
                )
        stdout = "".join(
            line.strip()[6:-1] + "\n" for line in lines if line.strip().startswith("print(")
        )
        results = []
        for probe in probes:
            expr = probe.expr if isinstance(probe, Probe) else probe
            wants_graph = isinstance(probe, Probe) and probe.graph
            if expr == "x":
                results.append(ProbeResult(expr=expr, value=_tensor(None), graph=Graph(root=None)))
            else:
                results.append(
                    ProbeResult(
                        expr=expr,
                        value=_tensor("SumBackward0"),
                        graph=GRAPH if wants_graph else None,
                    )
                )
        return RunResult(
            outcome="ok", device=device, stdout=stdout, probes=results, duration_ms=12.0
        )


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines() if line.strip())


class FakeGrading:
    """Runs the learner code through the runner; passes when it ran and matches the
    reference solution line for line (the real grading compares values)."""

    def grade_step(
        self, lesson: Lesson, step: Any, code: str, *, runner: Any, device: str = "cpu"
    ) -> Verdict:
        ref = f"{lesson.id}/{step.id}"
        run = runner.run(code, device=device, probes=["x.grad"])
        if not run.ok:
            return Verdict(step=ref, status="error", score=0, max_score=2, run=run)
        same = _normal(code) == _normal(step.solution)
        check = CheckResult(
            name="value:x.grad",
            label=T("x.grad", "x.grad"),
            status="pass" if same else "fail",
            points=2 if same else 0,
            max_points=2,
            message=T("x.grad is right", "x.grad 正确")
            if same
            else T("x.grad differs from the solution's", "x.grad 与参考答案不同"),
            output=None if same else "got: None\nexpected: tensor([4.5, 4.5])",
        )
        return Verdict(
            step=ref,
            status="pass" if same else "fail",
            score=check.points,
            max_score=2,
            checks=[check],
            run=run,
        )

    def grade_answer(
        self, lesson: Lesson, step: AnswerStep, typed: str, *, runner: Any, device: str = "cpu"
    ) -> Verdict:
        ref = f"{lesson.id}/{step.id}"
        if "tensor" not in typed and "[" not in typed:
            raise ValueError(f"cannot read {typed!r} as a tensor")
        runner.run(step.code, device=device, probes=[step.expr])
        ok = typed.replace(" ", "") in {"tensor([1.,1.])", "[1.,1.]", "tensor([1.0,1.0])"}
        return Verdict(
            step=ref,
            status="pass" if ok else "fail",
            score=1 if ok else 0,
            max_score=1,
            message=T("You typed " + typed, "你填写了 " + typed),
        )

    def grade_quiz(
        self, lesson: Lesson, step: QuizStep, selected: Sequence[int], *, reveal: bool = True
    ) -> Verdict:
        right = sorted(i for i, choice in enumerate(step.choices) if choice.correct)
        ok = sorted(selected) == right
        return Verdict(
            step=f"{lesson.id}/{step.id}",
            status="pass" if ok else "fail",
            score=1 if ok else 0,
            max_score=1,
            message=step.choices[selected[0]].explanation,
        )


def fake_diagnose(result: RunResult, code: str) -> list[Diagnosis]:
    if result.error is None or result.error.type == "Cancelled":
        return []
    return [
        Diagnosis(
            id="non-scalar-backward",
            severity="error",
            title=T("backward() on a non-scalar", "对非标量调用 backward()"),
            explanation=T(
                "`z` has more than one element, so backward() needs a gradient argument.",
                "`z` 不止一个元素，因此 backward() 需要 gradient 参数。",
            ),
            fix=T("Call `z.sum().backward()`.", "改为调用 `z.sum().backward()`。"),
            line=result.error.line,
            variable="z",
        )
    ]


def fake_answer(text: str) -> Answer:
    return Answer(
        text=text,
        sources=["mini-basics/intro"],
        titled_sources=[
            Source(
                id="mini-basics/intro",
                title=T("Tracking gradients", "追踪梯度"),
                where=T("Mini: basics", "迷你：基础"),
            )
        ],
    )


class FakeTutor:
    def __init__(self) -> None:
        self.questions: list[tuple[str, str, Any]] = []

    def ask(self, question: str, *, lang: str, context: Any = None) -> Answer:
        self.questions.append((question, lang, context))
        if lang == "zh":
            return fake_answer("`.grad` 保存叶子张量的梯度。")
        return fake_answer("`.grad` holds the gradient of a leaf tensor.")


def create_app(*, course: Course, runner: Any, store: Any, device: str = "cpu",
               settings: SettingsStore | None = None, **session: Any) -> TutorApp:
    """The app over a :class:`LearningSession` of these parts, built as ``tutor`` builds it
    (tutor/cli/app_cmd.py): runs use cpu until the runner has said which devices exist;
    ``device`` is what the learner asked for; ``session``: the session's other options."""
    return TutorApp(LearningSession(course, runner, store, **session), wanted_device=device,
                    settings=settings)
