"""Dynamic lesson lint: every step must be gradable with its own reference answers.

``tutor lint`` calls :func:`verify_lesson` for each lesson; each problem names the step and
the field to point at (``solution``, ``starter``, ``code``, ``cross_check``, ``choices``).
"""

from __future__ import annotations

import ast
import builtins
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from tutor import syntax_tree
from tutor.course.cheats import Cheat, raising_at, static_cheats
from tutor.course.lint import quiz_answer_problem
from tutor.course.models import (
    AnswerStep,
    AstCheck,
    AttributeCheck,
    ErrorCheck,
    FixStep,
    FunctionCheck,
    Lesson,
    QuizStep,
    RunnableStep,
    ValueCheck,
)
from tutor.grading.answers import AnswerSyntaxError, parse_answer
from tutor.grading.checks import function_probe, probes_for
from tutor.grading.compare import compare, flatten
from tutor.grading.expected import ExpectedCache
from tutor.grading.feedback import fmt_shape, fmt_values, msg
from tutor.grading.models import Verdict
from tutor.grading.varied import moving_checks, varied_checks
from tutor.grading.verdicts import compare_answer, grade_step, step_ref
from tutor.i18n import T, Text
from tutor.python_names import free_names, parses
from tutor.sandbox.models import TensorSnapshot, ValueSnapshot

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner


class SelfCheckProblem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step_id: str
    field: str
    message: str
    """In English; ``text`` has both languages (lint prints the author's)."""
    text: Text | None = None


def _problem(step_id: str, field: str, text: Text) -> SelfCheckProblem:
    return SelfCheckProblem(step_id=step_id, field=field, message=text.en, text=text)


def _failures(verdict: Verdict) -> Text:
    """The failing checks of a verdict, one clause each."""
    parts = [Text(en=f"{c.name}: {c.message.en}", zh=f"{c.name}：{c.message.zh}")
             for c in verdict.checks if c.status != "pass"]
    if not parts and verdict.message is not None:
        parts = [verdict.message]
    if not parts:
        return Text(en=verdict.status, zh=verdict.status)
    return Text(en="; ".join(p.en for p in parts), zh="；".join(p.zh for p in parts))


def _runnable(
    lesson: Lesson, step: RunnableStep, runner: Runner, device: str, cache: ExpectedCache,
    *, cheats: bool = True,
) -> list[SelfCheckProblem]:
    problems: list[SelfCheckProblem] = []
    solution = grade_step(lesson, step, step.solution, runner=runner, device=device, cache=cache)
    if not solution.passed:
        failures = _failures(solution)
        problems.append(_problem(step.id, "solution", Text(
            en=f"the reference solution does not pass its own checks ({solution.status}): "
               f"{failures.en}",
            zh=f"参考答案没有通过它自己的检查（{solution.status}）：{failures.zh}",
        )))
    if isinstance(step, FixStep):
        problems += _passing_starters(lesson, step, runner, device, cache)
    if solution.passed and cheats:
        problems += _passing_cheats(lesson, step, runner, device, cache)
    return problems


CHEAT_WORKERS = 4
"""Cheats of one step graded at once (the sandbox runs are independent processes)."""


def _truth_names(step: RunnableStep) -> list[str]:
    """Variables the checks read, which a hard-coding cheat defines by value."""
    names: list[str] = []
    for check in step.checks:
        if isinstance(check, (ValueCheck, AttributeCheck)):
            try:
                names += sorted(free_names(check.expr))
            except SyntaxError:
                continue
    functions = {c.function for c in step.checks if isinstance(c, FunctionCheck)}
    return [n for n in dict.fromkeys(names)
            if n not in functions and n != "torch" and not hasattr(builtins, n)]


def _literal(snapshot: Any) -> str | None:
    """Python source that rebuilds a probed value (None when it cannot be written down)."""
    if isinstance(snapshot, TensorSnapshot):
        if snapshot.values is None:
            return None
        dtype = snapshot.dtype.removeprefix("torch.")
        code = f"torch.tensor({snapshot.values!r}, dtype=torch.{dtype}"
        if snapshot.requires_grad and dtype.startswith(("float", "complex", "bfloat")):
            code += ", requires_grad=True"
        return code + ")"
    if isinstance(snapshot, ValueSnapshot) and snapshot.type in ("bool", "int", "float", "str",
                                                                 "list", "tuple"):
        return repr(snapshot.value)
    return None


def _attribute_chains(step: RunnableStep) -> list[str]:
    """``net.fc.weight`` for a check on ``net.fc.weight.grad`` (or on ``net.fc.weight``):
    the attributes of objects the checks read, which a cheat writes down on objects of its
    own."""
    chains: list[str] = []
    for check in step.checks:
        if not isinstance(check, (ValueCheck, AttributeCheck)):
            continue
        try:
            node = syntax_tree.parse(check.expr, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, ast.Attribute) and node.attr == "grad":
            node = node.value
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name) and parts:
            chains.append(".".join([node.id, *parts]))
    return list(dict.fromkeys(chains))


class _Writer:
    """The lines of a program that writes values down (see :func:`_written_down`)."""

    def __init__(self, *, routed: bool) -> None:
        self.routed = routed
        self.lines = ["import torch"]
        if routed:
            self.lines.append(f"{_ZERO} = torch.zeros((), requires_grad=True)\n"
                              f"{_ONE} = torch.ones((), requires_grad=True)")
        self.backwards: list[str] = []
        self.objects: set[str] = set()
        self.written: set[str] = set()

    def write(self, target: str, snapshot: Any) -> None:
        """``target = <its value>``, its gradient assigned or routed."""
        value = _literal(snapshot)
        if value is None:
            return
        for end in range(1, target.count(".") + 1):  # the objects that hold it
            owner = target.rsplit(".", target.count(".") - end + 1)[0]
            if owner not in self.objects and owner not in self.written:
                if not self.objects:
                    self.lines.append("class _Written:\n    pass")
                self.lines.append(f"{owner} = _Written()")
                self.objects.add(owner)
        grad = snapshot.grad if isinstance(snapshot, TensorSnapshot) else None
        grad_code = _literal(grad) if grad is not None else None
        tracked = isinstance(snapshot, TensorSnapshot) and not snapshot.is_leaf
        if self.routed and tracked:
            value = _plausible(snapshot)
        self.lines.append(f"{target} = {value}")
        self.written.add(target)
        if grad_code is None:
            return
        if not self.routed:
            self.lines.append(f"{target}.grad = {grad_code}")
            return
        if tracked:
            self.lines.append(f"{target}.retain_grad()")
        self.backwards.append(f"({target} * {grad_code}).sum().backward()")


def _written_down(step: RunnableStep, runner: Runner, device: str,
                  cache: ExpectedCache, *, routed: bool) -> Cheat | None:
    """A program that only writes down what the reference solution's run produced: each
    variable the checks read (or attribute of an object they read, on an object of its
    own), its ``.grad``, each function's first answer, the output.

    ``routed``: no ``.grad`` is assigned; each gradient is routed through a real
    ``backward()`` into a leaf written down with its values, and each non-leaf is made from
    a helper leaf with the values and (where :data:`_GRAD_FN_FORMS` knows it) the class of
    ``grad_fn`` the solution's had: autograd sets every ``.grad``, none of it by the work."""
    names = _truth_names(step)
    chains = _attribute_chains(step)
    firsts = {c.function: function_probe(c.function, c.cases[0])
              for c in step.checks if isinstance(c, FunctionCheck)}
    probes = list(dict.fromkeys([*probes_for(step.checks), *names, *chains,
                                 *firsts.values()]))
    run = cache.solution_run(runner, step.solution, probes, device)
    writer = _Writer(routed=routed)
    for name in names:
        probe = run.probe(name)
        if probe is not None and probe.value is not None:
            writer.write(name, probe.value)
    for chain in chains:
        probe = run.probe(chain)
        if chain.split(".")[0] not in writer.written and probe is not None and (
                probe.value is not None):
            writer.write(chain, probe.value)
    lines = writer.lines
    if routed:
        if not writer.backwards:
            return None
        wanted = max([c.times for c in step.checks if isinstance(c, AstCheck)
                      and c.rule == "calls" and c.name == "backward"], default=1)
        extra = [f"({_ZERO} * 0).backward()"] * (wanted - len(writer.backwards))
        lines += writer.backwards + extra
    for function, expr in firsts.items():
        probe = run.probe(expr)
        value = _literal(probe.value) if probe is not None else None
        if value is not None:
            lines.append(f"def {function}(*args, **kwargs):\n    return {value}")
    if run.stdout:
        lines.append(f"print({run.stdout!r}, end='')")
    if len(lines) == 1:
        return None
    return Cheat("routed" if routed else "hard_coded", "\n".join(lines) + "\n")


_ZERO, _ONE = "_routed_zero", "_routed_one"
"""The routed cheat's helper leaves (a 0-dim zero and one that require grad)."""

_GRAD_FN_FORMS = {
    "AddBackward0": "{c} + _routed_zero",
    "SubBackward0": "{c} - _routed_zero",
    "MulBackward0": "{c} * _routed_one",
    "DivBackward0": "{c} / _routed_one",
    "NegBackward0": "-(-{c} + _routed_zero)",
    "PowBackward0": "({c} + _routed_zero) ** 1",
    "CloneBackward0": "({c} + _routed_zero).clone()",
    "SumBackward1": "({c}.unsqueeze(0) + _routed_zero).sum(0)",
    "MeanBackward1": "({c}.unsqueeze(0) + _routed_zero).mean(0)",
}
"""How to give a value a ``grad_fn`` of a known class without computing anything."""
_SCALAR_FORMS = {
    "SumBackward0": "({c}.reshape(1) + _routed_zero).sum()",
    "MeanBackward0": "({c}.reshape(1) + _routed_zero).mean()",
    "DotBackward0": "torch.dot({c}.reshape(1), _routed_one.reshape(1))",
}
_MATRIX_FORMS = {
    "MmBackward0": "torch.mm({c}, torch.eye({cols}, dtype={dtype}) + _routed_zero)",
    "TBackward0": "({c}.t() + _routed_zero).t()",
}


def _plausible(snapshot: TensorSnapshot) -> str:
    """A non-leaf's values as a tensor that requires grad, with its ``grad_fn``'s class
    where a form is known for it (else ``AddBackward0``)."""
    constant = _literal(snapshot.model_copy(update={"requires_grad": False}))
    assert constant is not None  # only called for values that could be written down
    forms = dict(_GRAD_FN_FORMS)
    if not snapshot.shape:
        forms.update(_SCALAR_FORMS)
    if len(snapshot.shape) == 2:
        forms.update(_MATRIX_FORMS)
    form = forms.get(snapshot.grad_fn or "", forms["AddBackward0"])
    cols = snapshot.shape[-1] if snapshot.shape else 1
    return form.format(c=constant, cols=cols, dtype=snapshot.dtype)


def _hard_coded(step: RunnableStep, runner: Runner, device: str,
                cache: ExpectedCache) -> Cheat | None:
    """The solution's values written down, ``.grad`` assigned by hand."""
    return _written_down(step, runner, device, cache, routed=False)


def _routed(step: RunnableStep, runner: Runner, device: str,
            cache: ExpectedCache) -> Cheat | None:
    """The solution's values written down, each gradient routed through ``backward()``."""
    return _written_down(step, runner, device, cache, routed=True)


def _by_hand(step: RunnableStep, runner: Runner, device: str,
             cache: ExpectedCache) -> Cheat | None:
    """The solution with the line where torch raised replaced by a ``raise`` of the same
    error: an error check must tell torch's error from the learner's."""
    if not any(isinstance(c, ErrorCheck) for c in step.checks):
        return None
    run = cache.solution_run(runner, step.solution, probes_for(step.checks), device)
    if run.error is None or run.error.line is None:
        return None
    code = raising_at(step.solution, run.error.line, run.error.type, run.error.message)
    return Cheat("raised_by_hand", code) if code is not None else None


def _passing_cheats(
    lesson: Lesson, step: RunnableStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    """Every automatic cheat (and the author's) that passes the step, one problem each."""
    cheats = [c for c in static_cheats(step) if not (c.kind == "starter" and isinstance(
        step, FixStep))]  # a fix step's starters are checked (and named) on their own
    cheats += [c for c in (_hard_coded(step, runner, device, cache),
                           _routed(step, runner, device, cache),
                           _by_hand(step, runner, device, cache)) if c is not None]
    cheats = [c for c in cheats if parses(c.code)]

    def passes(cheat: Cheat) -> bool:
        verdict = grade_step(lesson, step, cheat.code, runner=runner, device=device, cache=cache)
        return verdict.passed

    with ThreadPoolExecutor(max_workers=CHEAT_WORKERS) as pool:
        passed = list(pool.map(passes, cheats))
    problems = []
    for cheat, ok in zip(cheats, passed, strict=True):
        if not ok:
            continue
        what = msg(f"cheat.{cheat.kind}")
        detail = f" ({cheat.detail})" if cheat.detail else ""
        text = what + T(
            f"{detail} passes every check: a check it passes does not measure the work; "
            "add a check it fails (a function on hidden inputs, a grad_fn, an AST rule)",
            f"{detail}通过了所有检查：它能通过的检查衡量不了学习者的工作；请加上它过不了的检查"
            "（隐藏输入上的函数检查、grad_fn、AST 规则）")
        if cheat.kind == "routed":
            text += _varied_gap(lesson, step, runner, device, cache)
        problems.append(_problem(step.id, "checks", text))
    return problems


def _varied_gap(lesson: Lesson, step: RunnableStep, runner: Runner, device: str,
                cache: ExpectedCache) -> Text:
    """Why varied grading does not catch the routed cheat of a step."""
    if not step.varied:
        return T("; the step opts out of varied grading (varied: false)",
                 "；这一步不参加变换输入的评分（varied: false）")
    if not varied_checks(step):
        return T("; no check compares a value with the solution's, so nothing is graded on "
                 "varied inputs",
                 "；没有检查把某个值与参考答案的值比较，所以没有什么在变换后的输入上评分")
    truth = cache.solution_run(runner, step.solution, probes_for(step.checks), device)
    moving, _ = moving_checks(step, step_ref(lesson, step), truth, runner=runner,
                              device=device, cache=cache)
    if not moving:
        return T("; none of the values it checks changes when the solution's leaves start "
                 "from other values (check one that does, such as the loss)",
                 "；参考答案的叶子张量换成别的起始值时，它检查的值都不变"
                 "（请检查一个会随之变化的值，比如损失）")
    return T("", "")


def _passing_starters(
    lesson: Lesson, step: FixStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    """A fix-the-bug starter must fail in every language it is written in: a translated
    starter is graded on its own, so a zh version that lost the bug is caught too."""
    versions = {"en": step.starters.en, "zh": step.starters.zh}
    translated = versions["en"] != versions["zh"]
    problems: list[SelfCheckProblem] = []
    for lang, code in versions.items():
        if lang == "zh" and not translated:
            break
        verdict = grade_step(lesson, step, code, runner=runner, device=device, cache=cache)
        if verdict.passed:
            which = T("the buggy starter", "这个带错的 starter")
            if translated:
                which = T(f"the {lang} version of the buggy starter",
                          f"{lang} 版本的带错 starter")
            problems.append(_problem(
                step.id, f"starter.{lang}" if translated else "starter",
                which + T(" already passes every check; a fix-the-bug step's starter must "
                          "raise or fail a check",
                          " 已经通过了所有检查；改错题的 starter 必须报错或有检查不通过"),
            ))
    return problems


def _answer(
    step: AnswerStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    run = cache.solution_run(runner, step.code, [step.expr], device)
    if run.outcome != "ok":
        detail = f"{run.error.type}: {run.error.message}" if run.error else run.outcome
        return [_problem(step.id, "code", T(f"the step's code does not run cleanly ({detail})",
                                             f"这一步的代码没有正常运行（{detail}）"))]
    probe = run.probe(step.expr)
    if probe is None or probe.value is None:
        detail = f"{probe.error.type}: {probe.error.message}" if probe and probe.error else ""
        return [_problem(step.id, "code", T(
            f"`{step.expr}` cannot be evaluated after the code ran {detail}".rstrip(),
            f"代码运行后无法求出 `{step.expr}` {detail}".rstrip(),
        ))]
    if step.cross_check is None:
        return []
    if isinstance(step.cross_check, str):
        try:
            answer = parse_answer(step.cross_check)
        except AnswerSyntaxError as error:
            return [SelfCheckProblem(step_id=step.id, field="cross_check", message=str(error))]
        ok, _, _ = compare_answer(step.expr, answer, probe.value, step.rtol, step.atol)
        said = step.cross_check
    else:
        result = compare(
            step.expr, probe.value, step.cross_check, rtol=step.rtol, atol=step.atol, literal=True
        )
        ok, said = result.ok, fmt_values(step.cross_check)
    if ok:
        return []
    # torch is the truth here and the author's cross_check the claim under test
    gives = _shown(probe.value)
    text = T(f"`{step.expr}`: torch gives {gives}, cross_check says {said}",
             f"`{step.expr}`：torch 算出 {gives}，cross_check 写的是 {said}")
    flat = flatten(step.cross_check) if not isinstance(step.cross_check, str) else None
    if isinstance(probe.value, TensorSnapshot) and flat and tuple(probe.value.shape) != flat[0]:
        torch_shape, said_shape = fmt_shape(probe.value.shape), fmt_shape(flat[0])
        text += T(f" (shape {torch_shape} vs {said_shape})",
                  f"（形状 {torch_shape} 与 {said_shape} 不同）")
    return [_problem(step.id, "cross_check", text)]


def _shown(snapshot: TensorSnapshot | ValueSnapshot) -> str:
    """A value as an author writes it in ``cross_check`` (``[2.0, 2.0]``, ``True``)."""
    if isinstance(snapshot, TensorSnapshot):
        return fmt_values(snapshot.values) if snapshot.values is not None else (
            f"a tensor of shape {fmt_shape(snapshot.shape)}")
    return fmt_values(snapshot.value) if snapshot.value is not None else snapshot.repr


def _quiz(step: QuizStep) -> list[SelfCheckProblem]:
    text = quiz_answer_problem(step)
    return [] if text is None else [_problem(step.id, "choices", text)]


def verify_lesson(
    lesson: Lesson, *, runner: Runner, device: str = "cpu", cache: ExpectedCache | None = None,
    cheats: bool = True,
) -> list[SelfCheckProblem]:
    """Every problem found by running the lesson's reference answers, in step order; with
    ``cheats``, also every automatic cheat that passes an exercise."""
    cache = cache if cache is not None else ExpectedCache(disk=False)
    problems: list[SelfCheckProblem] = []
    for step in lesson.steps:
        if isinstance(step, RunnableStep):
            problems += _runnable(lesson, step, runner, device, cache, cheats=cheats)
        elif isinstance(step, AnswerStep):
            problems += _answer(step, runner, device, cache)
        elif isinstance(step, QuizStep):
            problems += _quiz(step)
    return problems
