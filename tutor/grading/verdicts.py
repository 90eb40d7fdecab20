"""Verdicts for one submission of one step: code and fix steps, typed answers, quizzes."""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from tutor import syntax_tree
from tutor.course.models import (
    AnswerStep,
    CodeStep,
    ErrorCheck,
    FixStep,
    Lesson,
    QuizStep,
    RunnableStep,
)
from tutor.errors import TutorError
from tutor.grading.answers import AnswerSyntaxError, ParsedAnswer, parse_answer
from tutor.grading.checks import (
    FATAL_OUTCOMES,
    check_label,
    check_name,
    evaluate,
    probes_for,
    run_failure_message,
)
from tutor.grading.compare import DTYPE_FAMILY, compare, family_of, flatten
from tutor.grading.expected import CACHEABLE_OUTCOMES, ExpectedCache
from tutor.grading.feedback import msg
from tutor.grading.integrity import find_violations
from tutor.grading.models import CheckResult, Verdict, VerdictStatus
from tutor.grading.varied import grade_varied
from tutor.i18n import Text
from tutor.records import check_options
from tutor.sandbox.models import Limits, RunResult, TensorSnapshot, ValueSnapshot

if TYPE_CHECKING:  # typing.Unpack is 3.11+; annotations are never evaluated here
    from typing_extensions import Unpack

    from tutor.sandbox.runner import Runner

class QuizSelectionError(TutorError):
    """The selection does not fit the quiz (index out of range, several picks for one)."""


def step_ref(lesson: Lesson, step: Any) -> str:
    return f"{lesson.id}/{step.id}"


class _GradingRunner(TypedDict):
    runner: Runner
    """What runs the learner's code and the reference solution (:class:`Runner`)."""


class GradingOptions(_GradingRunner, total=False):
    """Where a grading's runs go (``runner``, required), on which ``device`` (default
    ``cpu``), and the ``cache`` of the reference solution's runs (default: one per process,
    in the user cache dir): the keyword options of :func:`grade_step`,
    :func:`grade_answer` and :func:`expected_run`."""

    device: str
    cache: ExpectedCache | None


def _truth_source(options: GradingOptions) -> tuple[Runner, str, ExpectedCache]:
    """``options`` with their defaults filled in."""
    check_options(options, GradingOptions, "grading")
    return options["runner"], options.get("device", "cpu"), _cache(options.get("cache"))


def _cache(cache: ExpectedCache | None) -> ExpectedCache:
    return cache if cache is not None else _default_cache()


_DEFAULT_CACHE: list[ExpectedCache] = []
_DEFAULT_CACHE_LOCK = threading.Lock()


def _default_cache() -> ExpectedCache:
    """One process-wide cache in the user cache dir, for callers that pass none."""
    with _DEFAULT_CACHE_LOCK:
        if not _DEFAULT_CACHE:
            _DEFAULT_CACHE.append(ExpectedCache())
        return _DEFAULT_CACHE[0]


def expected_run(step: RunnableStep, **options: Unpack[GradingOptions]) -> RunResult:
    """The reference solution's run with the step's probes (the truth), cached."""
    runner, device, cache = _truth_source(options)
    return cache.solution_run(runner, step.solution, probes_for(step.checks), device)


def unrun_checks(
    step: RunnableStep, message: Text, output: Text | None = None
) -> list[CheckResult]:
    """Every check of a step, each scored 0 with ``message``: a submission that was not
    run still lists them all, so its tests add up to its ``max_score``."""
    names: dict[str, int] = {}
    checks = []
    for check in step.checks:
        name = check_name(check)
        names[name] = names.get(name, 0) + 1
        checks.append(CheckResult(
            name=name if names[name] == 1 else f"{name}#{names[name]}",
            label=check_label(check), status="error", points=0.0,
            max_points=float(check.points), message=message,
            output=output.en if output is not None else None, output_text=output,
        ))
    return checks


def _syntax_verdict(ref: str, step: RunnableStep, error: SyntaxError) -> Verdict:
    max_score = float(sum(check.points for check in step.checks))
    message = msg("not_gradable", line=str(error.lineno or "?"), message=error.msg or "")
    return Verdict(step=ref, status="not_gradable", score=0.0, max_score=max_score,
                   checks=unrun_checks(step, message), message=message)


def _truth_unknown(ref: str, step: RunnableStep, expected: RunResult | None) -> Verdict | None:
    """No grade against a truth the machine failed to compute (its reference run timed out,
    ran out of memory or crashed, even when tried again): the submission is not the cause."""
    if expected is None or expected.outcome in CACHEABLE_OUTCOMES:
        return None
    max_score = float(sum(check.points for check in step.checks))
    message = msg("truth_unknown", outcome=expected.outcome)
    return Verdict(step=ref, status="not_gradable", score=0.0, max_score=max_score,
                   checks=unrun_checks(step, message), message=message)


def _integrity_verdict(ref: str, step: RunnableStep, tree: ast.Module) -> Verdict | None:
    violations = find_violations(tree)
    if not violations:
        return None
    first = violations[0]
    message = msg("integrity", line=str(first.line), what=first.what)
    output = Text(
        en="\n".join(f"line {v.line}: {v.what}" for v in violations[:20]),
        zh="\n".join(f"第 {v.line} 行：{v.what}" for v in violations[:20]),
    )
    max_score = float(sum(check.points for check in step.checks))
    return Verdict(
        step=ref, status="error", score=0.0, max_score=max_score,
        checks=unrun_checks(step, message, output), message=message,
    )


def _verdict(
    ref: str, checks: list[CheckResult], run: RunResult | None, step: RunnableStep
) -> Verdict:
    score = round(sum(c.points for c in checks), 6)
    max_score = float(sum(c.max_points for c in checks))
    status: VerdictStatus
    message: Text | None = None
    expects_error = any(isinstance(c, ErrorCheck) for c in step.checks)
    if run is not None and (
        run.outcome in FATAL_OUTCOMES or (run.outcome == "error" and not expects_error)
    ):
        status, message = "error", run_failure_message(run)
    elif any(c.status == "error" for c in checks):
        status = "error"
        message = next(c.message for c in checks if c.status == "error")
    elif all(c.status == "pass" for c in checks):
        status, message = "pass", msg("verdict_pass")
    else:
        status = "fail"
        failed = sum(1 for c in checks if c.status != "pass")
        message = msg("verdict_fail", failed=str(failed), total=str(len(checks)))
    return Verdict(
        step=ref,
        status=status,
        score=score,
        max_score=max_score,
        checks=checks,
        message=message,
        run=run,
    )


def prepare(
    lesson: Lesson, step: RunnableStep, code: str
) -> tuple[ast.Module | None, Verdict | None]:
    """Parse and screen a submission: a verdict now when it cannot or may not be run."""
    ref = step_ref(lesson, step)
    try:
        tree = syntax_tree.parse(code, filename="<learner>")
    except SyntaxError as error:
        return None, _syntax_verdict(ref, step, error)
    except ValueError as error:  # null bytes
        return None, _syntax_verdict(ref, step, SyntaxError(str(error)))
    return tree, _integrity_verdict(ref, step, tree)


def grade_run(
    lesson: Lesson,
    step: RunnableStep,
    code: str,
    run: RunResult | None,
    expected: RunResult | None,
    *,
    reveal: bool = True,
) -> Verdict:
    """Grade a run already made (e.g. by the TUI, with ``probes_for(step.checks)``);
    ``reveal=False`` keeps the expected values out of the feedback."""
    tree, early = prepare(lesson, step, code)
    if early is not None or tree is None:
        assert early is not None
        return early
    unknown = _truth_unknown(step_ref(lesson, step), step, expected)
    if unknown is not None:
        return unknown
    checks = evaluate(step.checks, code, tree, run, expected, reveal=reveal)
    return _verdict(step_ref(lesson, step), checks, run, step)


def grade_step(
    lesson: Lesson,
    step: RunnableStep,
    code: str,
    *,
    limits: Limits | None = None,
    reveal: bool = True,
    **options: Unpack[GradingOptions],
) -> Verdict:
    """Run the learner's code once with every probe the checks need, and grade it; a
    submission that passes checks whose values follow the inputs runs once more on hidden
    varied inputs (:mod:`tutor.grading.varied`).

    The truth is fetched (or computed) before the learner's code runs, so nothing a
    submission does can change the truth it is compared with. Whatever the run reports is
    the learner's claim: it scores only where it equals the truth, compared here.
    ``reveal=False`` (summative grading) keeps the expected values out of the feedback, so
    feedback cannot be copied into a hard-coded answer."""
    if not isinstance(step, (CodeStep, FixStep)):
        raise TypeError(f"grade_step grades code and fix steps, not {step.kind!r}")
    tree, early = prepare(lesson, step, code)
    if early is not None or tree is None:
        assert early is not None
        return early
    runner, device, cache = _truth_source(options)
    expected = cache.solution_run(runner, step.solution, probes_for(step.checks), device)
    ref = step_ref(lesson, step)
    unknown = _truth_unknown(ref, step, expected)
    if unknown is not None:
        return unknown
    run = runner.run(code, device=device, probes=probes_for(step.checks), limits=limits)
    checks = evaluate(step.checks, code, tree, run, expected, reveal=reveal)
    checks = grade_varied(step, ref, code, tree, run, expected, checks, runner=runner,
                          device=device, cache=cache, limits=limits, reveal=reveal)
    return _verdict(ref, checks, run, step)


# --------------------------------------------------------------------------- answers


_OWN_DTYPE = {"bool": "torch.bool", "int": "torch.int64", "float": "torch.float32"}


def _as_floats(values: Any) -> Any:
    """Typed integers as floats (``[1, 3]`` is a fine way to type ``tensor([1., 3.])``);
    bools stay bools: they are another answer."""
    if isinstance(values, list):
        return [_as_floats(v) for v in values]
    return float(values) if type(values) is int else values


def _answer_as_tensor(answer: ParsedAnswer, truth: TensorSnapshot) -> TensorSnapshot | None:
    """A typed answer as the tensor it stands for, of the dtype its own elements have (the
    truth's, when they fit it), so that ``True`` never stands in for ``1.``."""
    if answer.kind not in ("tensor", "sequence", "number", "bool"):
        return None
    shape = answer.shape or []
    numel = 1
    for dim in shape:
        numel *= dim
    truth_family = DTYPE_FAMILY.get(truth.dtype)
    values = _as_floats(answer.value) if truth_family == "float" else answer.value
    flat = flatten(values)
    family = family_of(flat[1]) if flat is not None else "mixed"
    dtype = truth.dtype if family in (truth_family, "empty") else _OWN_DTYPE.get(family, "?")
    return TensorSnapshot(
        shape=shape,
        dtype=dtype,
        device=truth.device,
        requires_grad=False,
        is_leaf=True,
        numel=numel,
        values=values,
    )


def _name_matches(typed: str, truth: ValueSnapshot) -> bool:
    candidates = {truth.type, truth.repr, truth.repr.removeprefix("torch.")}
    return typed in candidates or typed.removeprefix("torch.") in candidates


def _kind_of(truth: TensorSnapshot | ValueSnapshot) -> Text:
    if isinstance(truth, TensorSnapshot):
        return msg("kind_tensor")
    if truth.value is not None or truth.type in ("bool", "int", "float", "str"):
        return msg("kind_python", type=truth.type)
    return msg("kind_object")


def compare_answer(
    expr: str,
    answer: ParsedAnswer,
    truth: TensorSnapshot | ValueSnapshot,
    rtol: float,
    atol: float,
) -> tuple[bool, Text, str | None]:
    """Whether a typed answer equals torch's value of ``expr``, and feedback that does not
    give the value away (the shape, yes: that is often the lesson)."""
    kind = _kind_of(truth)
    wrong_kind = Text(
        en=msg("answer_wrong_kind", expr=expr, expected=kind.en).en,
        zh=msg("answer_wrong_kind", expr=expr, expected=kind.zh).zh,
    )
    if isinstance(truth, TensorSnapshot):
        as_tensor = _answer_as_tensor(answer, truth)
        if as_tensor is None:
            if answer.kind == "none" and expr.endswith(".grad"):
                return False, msg("answer_not_none", expr=expr), None
            return False, wrong_kind, None
        result = compare(expr, as_tensor, truth, rtol=rtol, atol=atol, answer=True)
        return result.ok, result.message, None
    if truth.type == "NoneType":
        ok = answer.kind == "none"
        return ok, msg("answer_ok" if ok else "answer_expected_none", expr=expr), None
    if truth.type == "dtype" and answer.kind in ("name", "string"):
        typed_dtype = str(answer.value).removeprefix("torch.")
        ok = typed_dtype == str(truth.value or truth.repr).removeprefix("torch.")
        key = "answer_ok" if ok else "answer_name_differs"
        return ok, msg(key, expr=expr, typed=str(answer.value)), None
    if truth.value is not None or truth.type in ("bool", "int", "float", "str"):
        if answer.kind == "name" and isinstance(truth.value, str):
            typed: Any = answer.value
        elif answer.kind in ("name", "none"):
            return False, wrong_kind, None
        else:
            typed = answer.value
        result = compare(expr, typed, truth.value, rtol=rtol, atol=atol, literal=True,
                         answer=True)
        return result.ok, result.message, None
    if answer.kind not in ("name", "string"):
        return False, wrong_kind, None
    typed_name = str(answer.value)
    if _name_matches(typed_name, truth):
        return True, msg("answer_ok", expr=expr), None
    if typed_name + "0" == truth.type:
        return False, msg("answer_node_version", typed=typed_name, expected=truth.type), None
    return False, msg("answer_name_differs", expr=expr, typed=typed_name), None


def _answer_verdict(
    ref: str, status: VerdictStatus, check: CheckResult | None, message: Text
) -> Verdict:
    checks = [check] if check else []
    return Verdict(
        step=ref,
        status=status,
        score=check.points if check else 0.0,
        max_score=1.0,
        checks=checks,
        message=message,
    )


def grade_answer(
    lesson: Lesson,
    step: AnswerStep,
    typed: str,
    **options: Unpack[GradingOptions],
) -> Verdict:
    """Compare a typed value with torch's value of ``step.expr`` after ``step.code`` ran."""
    ref = step_ref(lesson, step)
    try:
        answer = parse_answer(typed)
    except AnswerSyntaxError as error:
        return _answer_verdict(ref, "not_gradable", None, error.text)
    runner, device, cache = _truth_source(options)
    truth_run = cache.solution_run(runner, step.code, [step.expr], device)
    probe = truth_run.probe(step.expr)
    label = msg("label_answer", expr=step.expr)
    if probe is None or probe.value is None:
        message = msg(
            "truth_failed",
            expr=step.expr,
            type=probe.error.type if probe and probe.error else truth_run.outcome,
            message=probe.error.message if probe and probe.error else "",
            line="?",
        )
        check = CheckResult(
            name=f"answer:{step.expr}",
            label=label,
            status="error",
            points=0.0,
            max_points=1.0,
            message=message,
        )
        return _answer_verdict(ref, "error", check, message)
    ok, message, output = compare_answer(step.expr, answer, probe.value, step.rtol, step.atol)
    if ok:
        message = msg("answer_ok", expr=step.expr)
    check = CheckResult(
        name=f"answer:{step.expr}",
        label=label,
        status="pass" if ok else "fail",
        points=1.0 if ok else 0.0,
        max_points=1.0,
        message=message,
        output=output,
    )
    return _answer_verdict(ref, "pass" if ok else "fail", check, message)


# --------------------------------------------------------------------------- quizzes


def grade_quiz(
    lesson: Lesson, step: QuizStep, selected: Sequence[int], *, reveal: bool = True
) -> Verdict:
    """Single choice: one point for the right pick. Multiple choice: a point per choice
    judged right (picked when correct, left when wrong). Every choice explains itself.

    ``reveal=False`` (a first wrong try, :func:`tutor.course.quiz.reveals_answer`): a wrong
    answer says neither which choice is right nor which choices were misjudged."""
    ref = step_ref(lesson, step)
    picks = sorted(set(selected))
    if any(i < 0 or i >= len(step.choices) for i in picks):
        raise QuizSelectionError(
            f"{ref}: choice numbers go from 0 to {len(step.choices) - 1}; got {list(selected)}"
        )
    if not picks:
        raise QuizSelectionError(f"{ref}: select at least one choice")
    if not step.multiple and len(picks) > 1:
        raise QuizSelectionError(f"{ref}: this question has one answer; pick one choice")
    checks: list[CheckResult] = []
    if step.multiple:
        for i, choice in enumerate(step.choices):
            picked = i in picks
            right = picked == choice.correct
            key = ("quiz_picked_" if picked else "quiz_left_") + ("right" if right else "wrong")
            checks.append(
                CheckResult(
                    name=f"choice:{i}",
                    label=msg("label_choice", number=str(i + 1)) + choice.text,
                    status="pass" if right else "fail",
                    points=1.0 if right else 0.0,
                    max_points=1.0,
                    message=msg(key) + choice.explanation,
                )
            )
    else:
        pick = picks[0]
        choice = step.choices[pick]
        message = msg("quiz_right" if choice.correct else "quiz_wrong") + choice.explanation
        correct = next((c for c in step.choices if c.correct), None)
        if not choice.correct and correct is not None:  # no right choice at all: lint's job
            message = (
                message
                + msg("quiz_right_one")
                + correct.text
                + msg("quiz_because")
                + (correct.explanation)
            )
        checks.append(
            CheckResult(
                name="choice",
                label=msg("label_choice", number=str(pick + 1)) + choice.text,
                status="pass" if choice.correct else "fail",
                points=1.0 if choice.correct else 0.0,
                max_points=1.0,
                message=message,
            )
        )
    score = sum(c.points for c in checks)
    passed = all(c.status == "pass" for c in checks)
    if not passed and not reveal:
        checks = [_kept_back(step, checks, picks)]
    return Verdict(
        step=ref,
        status="pass" if passed else "fail",
        score=score,
        max_score=float(len(checks)) if passed or reveal else checks[0].max_points,
        checks=checks,
        message=msg("verdict_pass") if passed else msg(
            "quiz_verdict_fail" if reveal else "quiz_verdict_try_again"),
    )


def grade_quiz_file(lesson: Lesson, step: QuizStep, text: str, *, reveal: bool = False
                    ) -> Verdict:
    """A quiz handed in as the file ``tutor start`` writes: the numbers in its ``ANSWER``
    are read against the choices its header lists (the order its learner saw), so the grade
    depends on no one's name or machine; a file whose listing or answer cannot be read is
    not gradable, and says why. Read as data, never run."""
    from tutor.workspace import listed_order, parse_quiz_answer, split_code

    order = listed_order(text, step)
    if order is None:
        return quiz_not_gradable(lesson, step, msg("quiz_file_unlisted"))
    picked = parse_quiz_answer(split_code(text), len(order))
    if isinstance(picked, Text):
        return quiz_not_gradable(lesson, step, picked)
    if not step.multiple and len(picked) > 1:
        return quiz_not_gradable(lesson, step, msg("quiz_file_one_answer"))
    return grade_quiz(lesson, step, [order[p] for p in picked], reveal=reveal)


def quiz_not_gradable(lesson: Lesson, step: QuizStep, message: Text,
                      status: VerdictStatus = "not_gradable") -> Verdict:
    """A quiz answer that was not graded: 0 of what it is worth, in one result (so its
    results add up to its ``max_score``, as every submission's do)."""
    total = float(len(step.choices)) if step.multiple else 1.0
    check = CheckResult(name="choices" if step.multiple else "choice",
                        label=msg("label_choices"), status="error", points=0.0,
                        max_points=total, message=message)
    return Verdict(step=step_ref(lesson, step), status=status, score=0.0, max_score=total,
                   checks=[check], message=message)


def _kept_back(step: QuizStep, checks: list[CheckResult], picks: list[int]) -> CheckResult:
    """A wrong answer's one result that gives nothing away: the picked choice's own
    explanation for a single choice; for several, only how many were judged right."""
    if not step.multiple:
        choice = step.choices[picks[0]]
        message = msg("quiz_wrong") + choice.explanation
        return CheckResult(name="choice", label=checks[0].label, status="fail", points=0.0,
                           max_points=1.0, message=message)
    right = sum(1 for c in checks if c.status == "pass")
    return CheckResult(
        name="choices", label=msg("label_choices"), status="fail",
        points=float(right), max_points=float(len(checks)),
        message=msg("quiz_judged", right=str(right), total=str(len(checks))))
