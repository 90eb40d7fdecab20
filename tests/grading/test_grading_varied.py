"""Grading on hidden varied inputs (issue 21 §2): an answer written down, with each gradient
routed through a real backward(), passes the ordinary run but cannot follow other inputs."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from tutor.course.models import Lesson
from tutor.grading import ExpectedCache
from tutor.grading.selfcheck import verify_lesson
from tutor.grading.verdicts import grade_step
from tutor.sandbox import Sandbox
from tutor.sandbox.models import Limits, Probe, RunResult


def _t(text: str) -> dict[str, str]:
    return {"en": text, "zh": text + "。"}


CUBE = "import torch\nx = torch.tensor([1., -2., 0.5], requires_grad=True)\n" \
       "loss = (x ** 3).sum()\nloss.backward()\n"
ROUTED_CUBE = ("import torch\nx = torch.tensor([1., -2., 0.5], requires_grad=True)\n"
               "(x * torch.tensor([3., 12., 0.75])).sum().backward()\n")


def _lesson(solution: str = CUBE, **more: Any) -> Lesson:
    step = {"id": "cube", "kind": "code", "title": _t("Cube"), "prompt": _t("p"),
            "solution": solution,
            "checks": [{"kind": "value", "expr": "x.grad"},
                       {"kind": "ast", "rule": "grad_from_backward"}]} | more
    return Lesson.model_validate({"id": "varied", "title": _t("Varied"), "steps": [step]})


class Counting:
    """A runner that counts the learner's runs (the reference's go through the cache)."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.varied = 0
        self.plain = 0
        self.lock = threading.Lock()

    def run(self, code: str, *, device: str = "cpu", probes: Sequence[str | Probe] = (),
            limits: Limits | None = None, cancel: threading.Event | None = None,
            instrument: bool = False, vary: int | None = None) -> RunResult:
        with self.lock:
            if vary is None:
                self.plain += 1
            else:
                self.varied += 1
        return self.inner.run(code, device=device, probes=probes, limits=limits, vary=vary)

    def devices(self) -> list[str]:
        return self.inner.devices()


def test_a_varied_run_changes_each_kind_of_leaf_the_same_way(sandbox: Sandbox) -> None:
    made_in_order = ("import torch\nx = torch.tensor([1., -2., 0.], requires_grad=True)\n"
                     "a = torch.ones(2)\na.requires_grad_()\n"
                     "b = torch.zeros(2)\nb.requires_grad = True\n"
                     "i = torch.tensor([1, 2])\nc = torch.tensor([1., -2., 0.])\n")
    probes = ["x", "a", "b", "i", "c", "torch.randn(2)"]
    plain = sandbox.run(made_in_order, probes=probes)
    varied = sandbox.run(made_in_order, probes=probes, vary=7)
    assert varied.varied is not None and varied.varied.count == 3
    assert varied.varied.names == ["a", "b", "x"]

    def values(run: RunResult) -> dict[str, Any]:
        return {p.expr: p.value.values for p in run.probes if p.value is not None
                and hasattr(p.value, "values")}

    before, after = values(plain), values(varied)
    for name in ("x", "a", "b"):
        assert all(new != old for new, old in zip(after[name], before[name], strict=True))
    assert all((new < 0) == (old < 0) for new, old in zip(after["x"], before["x"], strict=True))
    assert after["i"] == before["i"] and after["c"] == before["c"]  # no grad asked: as written
    assert varied.varied.starts == {name: after[name] for name in ("a", "b", "x")}
    assert after["torch.randn(2)"] != before["torch.randn(2)"]  # the generators reseeded
    assert plain.varied is None
    # the change depends on the seed, the shape and the values: not on order or spelling
    other_way = ("import torch\nb = torch.tensor([0., 0.], requires_grad=True)\n"
                 "x = torch.tensor([1., -2., 0.])\nx.requires_grad = True\n"
                 "a = torch.ones(2, requires_grad=True)\n")
    again = values(sandbox.run(other_way, probes=["x", "a", "b"], vary=7))
    assert again == {name: after[name] for name in ("x", "a", "b")}
    assert values(sandbox.run(made_in_order, probes=["x"], vary=8))["x"] != after["x"]
    # a program that seeds torch itself still draws other values, the same as one that does not
    seeded = "import torch\ntorch.manual_seed(0)\nr = torch.randn(2)\n"
    unseeded = "import torch\nr = torch.randn(2)\n"
    assert values(sandbox.run(seeded, probes=["r"]))["r"] == \
        values(sandbox.run(unseeded, probes=["r"]))["r"]
    assert values(sandbox.run(seeded, probes=["r"], vary=7))["r"] == \
        values(sandbox.run(unseeded, probes=["r"], vary=7))["r"] != \
        values(sandbox.run(seeded, probes=["r"]))["r"]
    # torch still says what is wrong with a leaf that cannot require grad
    bad = sandbox.run("import torch\nt = torch.tensor([1, 2], requires_grad=True)\n", vary=7)
    assert bad.error is not None and "floating point" in bad.error.message


def test_a_routed_answer_fails_on_varied_inputs(sandbox: Sandbox) -> None:
    lesson = _lesson()
    step = lesson.steps[0]
    verdict = grade_step(lesson, step, ROUTED_CUBE, runner=sandbox)
    assert verdict.status == "fail"
    failed = verdict.checks[0]
    assert failed.name == "value:x.grad" and failed.status == "fail"
    assert re.match(r"Your result does not follow the inputs: with `x` = \[1\.\d+, -2\.\d+, "
                    r"0\.\d+\], `x.grad` differs", failed.message.en), failed.message.en
    assert failed.message.zh.startswith("你的结果没有随输入而变：当 `x` = [")
    assert verdict.max_score == grade_step(lesson, step, CUBE, runner=sandbox).max_score
    truth = failed.output_text.en.split("expected: tensor [")[1].split(",")[0] \
        if failed.output_text else "?"
    assert truth in failed.message.en  # the varied truth, e.g. 6.70391
    hidden = grade_step(lesson, step, ROUTED_CUBE, runner=sandbox, reveal=False)
    said = hidden.checks[0]
    assert said.status == "fail" and said.message.en.startswith("Your result does not follow")
    assert truth not in said.message.en + said.message.zh + str(said.output_text)
    # the same program passes a step that opts out, at either level
    for opted in (_lesson(varied=False), _lesson(checks=[
            {"kind": "value", "expr": "x.grad", "varied": False},
            {"kind": "ast", "rule": "grad_from_backward"}])):
        assert grade_step(opted, opted.steps[0], ROUTED_CUBE, runner=sandbox).passed


def test_a_program_that_tells_the_varied_run_still_cannot_follow(sandbox: Sandbox) -> None:
    """The run is the learner's: one may pop the mode that varies its leaves, or notice it and
    stop. Either way its values are not the varied truth, and the check fails."""
    lesson = _lesson()
    step = lesson.steps[0]
    popped = ("import torch\nfrom torch.overrides import _get_current_function_mode_stack, "
              "_pop_mode\nwhile _get_current_function_mode_stack():\n    _pop_mode()\n"
              + ROUTED_CUBE.removeprefix("import torch\n"))
    noticed = ("import torch\nif torch.tensor([1.], requires_grad=True).item() != 1.:\n"
               "    raise SystemExit(0)\n") + ROUTED_CUBE.removeprefix("import torch\n")
    unvaried = _lesson(varied=False)
    for code in (popped, noticed):
        assert grade_step(unvaried, unvaried.steps[0], code, runner=sandbox).passed, code
        verdict = grade_step(lesson, step, code, runner=sandbox)
        assert not verdict.passed, code
        assert verdict.checks[0].message.en.startswith("Your result does not follow the inputs")


def test_correct_programs_written_another_way_pass(sandbox: Sandbox) -> None:
    lesson = _lesson()
    step = lesson.steps[0]
    loop = ("import torch\nx = torch.tensor([1., -2., 0.5])\nx.requires_grad_()\n"
            "loss = 0\nfor v in x:\n    loss = loss + v * v * v\nloss.backward()\n")
    by_grad = ("import torch\nvalues = [1., -2., 0.5]\nx = torch.tensor(values)\n"
               "x.requires_grad = True\ntorch.autograd.backward([(x ** 3).sum()])\n")
    for code in (CUBE, loop, by_grad):
        verdict = grade_step(lesson, step, code, runner=sandbox)
        assert verdict.passed, (code, [c.message.en for c in verdict.checks])


def test_the_varied_run_happens_only_where_it_can_tell(sandbox: Sandbox) -> None:
    cache = ExpectedCache(disk=False)
    counting = Counting(sandbox)
    lesson = _lesson()
    step = lesson.steps[0]
    constant = _lesson(solution=CUBE.replace("(x ** 3)", "(x * 3)"))
    for warm in (lesson, constant):  # the reference's runs, ordinary and varied, cached
        assert grade_step(warm, warm.steps[0], warm.steps[0].solution, runner=sandbox,
                          cache=cache).passed
    mine = CUBE.replace("x ** 3", "x * x * x")
    assert grade_step(lesson, step, mine, runner=counting, cache=cache).passed
    assert (counting.plain, counting.varied) == (1, 1)
    wrong = CUBE.replace("x ** 3", "x ** 2")
    assert not grade_step(lesson, step, wrong, runner=counting, cache=cache).passed
    assert (counting.plain, counting.varied) == (2, 1)  # failed already: not run again
    # a gradient constant in x cannot tell a written-down answer: no second run
    step = constant.steps[0]
    assert grade_step(constant, step, mine.replace("x * x * x", "3 * x"), runner=counting,
                      cache=cache).passed
    assert (counting.plain, counting.varied) == (3, 1)


def test_lint_says_why_no_varied_grading_catches_the_routed_cheat(sandbox: Sandbox) -> None:
    def routed_problems(lesson: Lesson) -> list[str]:
        return [p.message for p in verify_lesson(lesson, runner=sandbox)
                if p.message.startswith("the expected values written down, each gradient")]

    assert routed_problems(_lesson()) == []
    constant = routed_problems(_lesson(solution=CUBE.replace("(x ** 3)", "(x * 3)")))
    assert len(constant) == 1 and "none of the values it checks changes" in constant[0]
    opted = routed_problems(_lesson(varied=False))
    assert len(opted) == 1 and opted[0].endswith("opts out of varied grading (varied: false)")
