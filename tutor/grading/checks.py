"""Each declarative check of a step, evaluated against the learner's run and the truth.

Probes: every expression the checks need is evaluated in the learner's process only after
the learner's code finished (``probes_for``); the same probes run against the reference
solution in another process. Comparison happens here, in the parent, on plain data.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tutor import syntax_tree
from tutor.course.models import (
    AstCheck,
    AttributeCheck,
    Check,
    ErrorCheck,
    FunctionCheck,
    NoErrorCheck,
    StdoutCheck,
    ValueCheck,
)
from tutor.grading.ast_rules import check_rule, count_calls, grad_assignments, hand_written_grads
from tutor.grading.compare import compare, normalize, sayer
from tutor.grading.feedback import cap, fmt_shape, msg
from tutor.grading.models import CheckResult, CheckStatus
from tutor.i18n import T, Text
from tutor.sandbox.models import ErrorInfo, ProbeResult, RunResult, TensorSnapshot

FATAL_OUTCOMES = frozenset({"timeout", "memory", "crashed", "exited", "output_limit"})
"""The run did not finish: nothing it left behind is graded."""

GRAD_PROVENANCE_RULES = frozenset({"grad_from_backward", "no_grad_assignment"})

TORCH_RAISED = frozenset({"torch", "call", None})
"""Whose raise an error check accepts (``ErrorInfo.raised_by``): torch's code, or a C function
the learner's line called (torch's operations are); a ``raise`` in learner code never counts.
``None``: a result from before the sandbox reported it."""


def function_probe(function: str, case: str) -> str:
    """``f(case)`` with ``torch`` bound even when the learner never imported it."""
    return f"(lambda torch: {function}({case}))(__import__('torch'))"


def probes_for(checks: Sequence[Check]) -> list[str]:
    """Every expression the checks read after the code ran, in order, without repeats."""
    exprs: list[str] = []
    for check in checks:
        if isinstance(check, (ValueCheck, AttributeCheck)):
            exprs.append(check.expr)
        elif isinstance(check, FunctionCheck):
            exprs += [function_probe(check.function, case) for case in check.cases]
    return list(dict.fromkeys(exprs))


def check_name(check: Check) -> str:
    if isinstance(check, ValueCheck):
        return f"value:{check.expr}"
    if isinstance(check, AttributeCheck):
        return f"attribute:{check.expr}.{check.attribute}"
    if isinstance(check, AstCheck):
        return f"ast:{check.rule}" + (f":{check.name}" if check.name else "")
    if isinstance(check, FunctionCheck):
        return f"function:{check.function}"
    return check.kind


def check_label(check: Check) -> Text:
    if check.label is not None:
        return check.label
    if isinstance(check, ValueCheck):
        return msg("label_value", expr=check.expr)
    if isinstance(check, AttributeCheck):
        if check.attribute == "grad_is_none":  # no such attribute in torch: say what it means
            return msg("label_grad_is_none", expr=check.expr)
        return msg("label_attribute", expr=check.expr, attribute=check.attribute)
    if isinstance(check, ErrorCheck):
        return msg("label_error", type=check.type or "Exception")
    if isinstance(check, NoErrorCheck):
        return msg("label_no_error")
    if isinstance(check, StdoutCheck):
        return msg("label_stdout")
    if isinstance(check, AstCheck):
        return msg(f"label_ast_{check.rule}", name=check.name or "")
    return msg("label_function", function=check.function)


def describe_error(error: ErrorInfo | None) -> dict[str, str]:
    if error is None:
        return {"type": "Exception", "message": "", "line": "?"}
    return {
        "type": error.type,
        "message": cap(error.message, 300),
        "line": str(error.line) if error.line is not None else "?",
    }


def run_failure_message(run: RunResult) -> Text:
    """Why a run that did not finish earns nothing, in words a learner can act on."""
    if run.outcome == "timeout":
        if run.error is not None and run.error.type == "Cancelled":
            return msg("run_cancelled")
        return msg("run_timeout") + _stopped_at(run)
    if run.outcome == "memory":
        return msg("run_memory") + _stopped_at(run)
    if run.outcome == "crashed":
        return msg("run_crashed", signal=str(run.signal) if run.signal is not None else "?")
    if run.outcome == "exited":
        return msg("run_exited", code=str(run.exit_code) if run.exit_code is not None else "?")
    if run.outcome == "output_limit":
        return msg("run_output_limit") + _stopped_at(run)
    return msg("run_raised", **describe_error(run.error))


def _stopped_at(run: RunResult) -> Text:
    """The learner's line a run stopped at a limit was on, where it said (else nothing)."""
    error = run.error
    if error is None or error.line is None:
        return Text(en="", zh="")
    return msg("run_stopped_at", line=error.line, source=cap(error.source_line or "", 120))


@dataclass
class _Context:
    code: str
    tree: ast.Module
    run: RunResult | None
    expected: RunResult | None
    expects_error: bool
    reveal: bool = True
    """Whether feedback may show the expected values (not in summative grading)."""


def _result(
    name: str,
    check: Check,
    status: CheckStatus,
    fraction: float,
    message: Text,
    output: Text | str | None = None,
) -> CheckResult:
    """``output`` is a :class:`Text`, or a str that reads the same in both languages (the
    learner's own printed output, an error message from torch)."""
    if isinstance(output, str):
        output = Text(en=output, zh=output)
    return CheckResult(
        name=name,
        label=check_label(check),
        status=status,
        points=round(check.points * fraction, 6),
        max_points=float(check.points),
        message=message,
        output=output.en if output is not None else None,
        output_text=output,
    )


def got_expected(
    got: str, expected: str, *, multiline: bool = False, reveal: bool = True
) -> Text:
    """``got: … / expected: …`` detail in both languages (labels as in compare's); without
    ``reveal`` the ``got`` line alone."""
    sep, zh_sep = ("\n", "\n") if multiline else (" ", "")
    if not reveal:
        return Text(en=cap(f"got:{sep}{got}"), zh=cap(f"得到：{zh_sep}{got}"))
    return Text(
        en=cap(f"got:{sep}{got}\nexpected:{sep}{expected}"),
        zh=cap(f"得到：{zh_sep}{got}\n应为：{zh_sep}{expected}"),
    )


def _probe(run: RunResult | None, expr: str) -> ProbeResult | None:
    return run.probe(expr) if run is not None else None


def _probe_failure(expr: str, probe: ProbeResult | None) -> Text:
    if probe is None:
        return msg("probe_missing", expr=expr)
    error = probe.error
    if error is not None and error.type == "NameError":
        name = re.search(r"name '([^']+)'", error.message)
        return msg("not_defined", expr=expr, name=name.group(1) if name else expr)
    return msg("probe_error", expr=expr, **describe_error(error))


def _truth_failure(expr: str, expected: RunResult | None) -> Text:
    probe = _probe(expected, expr)
    detail = describe_error(probe.error if probe else expected.error if expected else None)
    return msg("truth_failed", expr=expr, **detail)


def _value(check: ValueCheck, name: str, ctx: _Context) -> CheckResult:
    got = _probe(ctx.run, check.expr)
    if got is None or got.value is None:
        return _result(name, check, "fail", 0, _probe_failure(check.expr, got))
    literal = check.expected is not None
    if literal:
        truth: Any = check.expected
        solution = _probe(ctx.expected, check.expr)
        if solution is not None and isinstance(solution.value, TensorSnapshot):
            # the literal gives the values; the solution says it is a tensor, so a list or a
            # number of those values is not the answer
            mine = normalize(got.value)
            if mine.kind != "tensor":
                say = sayer(reveal=ctx.reveal)
                shape = fmt_shape(solution.value.shape)
                return _result(name, check, "fail", 0,
                               say("not_a_tensor", expr=check.expr, got=mine.type_name,
                                   expected=shape))
    else:
        expected = _probe(ctx.expected, check.expr)
        if expected is None or expected.value is None:
            return _result(name, check, "error", 0, _truth_failure(check.expr, ctx.expected))
        truth = expected.value
    result = compare(
        check.expr,
        got.value,
        truth,
        rtol=check.rtol,
        atol=check.atol,
        check_dtype=check.check_dtype,
        literal=literal,
        reveal=ctx.reveal,
    )
    return _result(
        name,
        check,
        "pass" if result.ok else "fail",
        float(result.ok),
        result.message,
        result.output,
    )


_DTYPE_ALIASES = {
    "float": "float32",
    "double": "float64",
    "long": "int64",
    "int": "int32",
    "half": "float16",
    "bool": "bool",
}


def _attribute_of(snapshot: TensorSnapshot, attribute: str) -> Any:
    if attribute == "grad_is_none":
        return snapshot.grad is None
    if attribute == "shape":
        return list(snapshot.shape)
    return getattr(snapshot, attribute)


def _normalize_attribute(attribute: str, value: Any) -> Any:
    if attribute == "shape" and isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    if attribute == "dtype" and isinstance(value, str):
        bare = value.removeprefix("torch.")
        return "torch." + _DTYPE_ALIASES.get(bare, bare)
    if attribute == "grad_fn" and isinstance(value, str):
        return value.strip().strip("<>").split(" object")[0]
    return value


def _show(attribute: str, value: Any) -> str:
    if attribute == "shape" and isinstance(value, list):
        return fmt_shape(value)
    return str(value)


def _attribute(check: AttributeCheck, name: str, ctx: _Context) -> CheckResult:
    got = _probe(ctx.run, check.expr)
    if got is None or got.value is None:
        return _result(name, check, "fail", 0, _probe_failure(check.expr, got))
    mine_kind = normalize(got.value)
    if not isinstance(got.value, TensorSnapshot) or mine_kind.kind != "tensor":
        # a subclass, an object claiming to be a tensor, data that does not fit: not one
        return _result(
            name, check, "fail", 0,
            msg("attribute_not_tensor", expr=check.expr, got=mine_kind.type_name),
        )
    if check.expected is not None:
        truth = check.expected
    else:
        expected = _probe(ctx.expected, check.expr)
        if expected is None or not isinstance(expected.value, TensorSnapshot):
            return _result(name, check, "error", 0, _truth_failure(check.expr, ctx.expected))
        truth = _attribute_of(expected.value, check.attribute)
    attribute = check.attribute
    mine = _normalize_attribute(attribute, _attribute_of(got.value, attribute))
    truth = _normalize_attribute(attribute, truth)
    ok = mine == truth
    if attribute == "device" and not ok and isinstance(truth, str) and ":" not in truth:
        ok = str(mine).split(":")[0] == truth
    if ok:
        if attribute == "grad_is_none":
            key = "grad_none_ok" if mine else "grad_set_ok"
            return _result(name, check, "pass", 1, msg(key, expr=f"{check.expr}.grad"))
        return _result(
            name,
            check,
            "pass",
            1,
            msg("attribute_ok", expr=check.expr, attribute=attribute, value=_show(attribute, mine)),
        )
    values = {
        "expr": check.expr,
        "attribute": attribute,
        "got": _show(attribute, mine),
        "expected": _show(attribute, truth),
    }
    key = "attribute_mismatch"
    if attribute == "grad_is_none":
        key = "grad_is_none" if mine else "grad_not_none"
        values["var"] = check.expr
        values["expr"] = f"{check.expr}.grad"
    elif attribute == "requires_grad" and truth is True:
        key = "requires_grad_false"
    elif attribute == "grad_fn":
        key = "grad_fn_none" if mine is None else "grad_fn_mismatch"
    elif attribute == "is_leaf":
        key = "is_leaf_true" if mine else "is_leaf_false"
    output = got_expected(values["got"], values["expected"], reveal=ctx.reveal)
    say = sayer(reveal=ctx.reveal)
    return _result(name, check, "fail", 0, say(key, **values), output)


def _error(check: ErrorCheck, name: str, ctx: _Context) -> CheckResult:
    run = ctx.run
    assert run is not None
    if run.outcome != "error" or run.error is None:
        return _result(
            name, check, "fail", 0, msg("error_not_raised", type=check.type or "an exception")
        )
    error = run.error
    if error.raised_by not in TORCH_RAISED:
        return _result(name, check, "fail", 0, msg("error_not_from_torch", **describe_error(error)))
    if check.type and error.type != check.type:
        return _result(
            name,
            check,
            "fail",
            0,
            msg("error_wrong_type", expected=check.type, **describe_error(error)),
        )
    if check.match and not re.search(check.match, error.message):
        return _result(
            name,
            check,
            "fail",
            0,
            msg("error_wrong_message", pattern=check.match, **describe_error(error)),
        )
    return _result(name, check, "pass", 1, msg("error_ok", **describe_error(error)))


def _no_error(check: NoErrorCheck, name: str, ctx: _Context) -> CheckResult:
    run = ctx.run
    assert run is not None
    if run.outcome == "ok":
        return _result(name, check, "pass", 1, msg("no_error_ok"))
    return _result(
        name,
        check,
        "fail",
        0,
        run_failure_message(run),
        cap(run.error.message) if run.error else None,
    )


def _stdout(check: StdoutCheck, name: str, ctx: _Context) -> CheckResult:
    run = ctx.run
    assert run is not None
    out = run.stdout
    shown = Text(en=cap(out), zh=cap(out)) if out else T("(no output)", "（没有输出）")
    if check.contains is not None and check.contains not in out:
        return _result(name, check, "fail", 0, msg("stdout_missing", text=check.contains), shown)
    if check.regex is not None and not re.search(check.regex, out, re.MULTILINE):
        return _result(name, check, "fail", 0, msg("stdout_regex", pattern=check.regex), shown)
    if check.same_as_solution:
        if ctx.expected is None:
            return _result(name, check, "error", 0, _truth_failure("stdout", None))
        if out.rstrip() != ctx.expected.stdout.rstrip():
            detail = got_expected(out, ctx.expected.stdout, multiline=True, reveal=ctx.reveal)
            say = sayer(reveal=ctx.reveal)
            return _result(name, check, "fail", 0, say("stdout_differs"), detail)
    if check.contains is None and check.regex is None and not check.same_as_solution and not out:
        return _result(name, check, "fail", 0, msg("stdout_empty"), shown)
    return _result(name, check, "pass", 1, msg("stdout_ok"), shown)


def _ast(check: AstCheck, name: str, ctx: _Context) -> CheckResult:
    if check.rule == "calls" and check.name and check.times > 1:
        found = count_calls(ctx.tree, check.name)
        if found < check.times:
            return _result(name, check, "fail", 0, msg(
                "ast_fail_calls_times", name=check.name, times=str(check.times), found=str(found)))
    outcome = check_rule(ctx.tree, check.rule, check.name)
    values = {"line": str(outcome.line or "?"), "name": check.name or "", "what": outcome.detail}
    if outcome.holds:
        return _result(name, check, "pass", 1, msg(f"ast_ok_{check.rule}", **values))
    key = f"ast_fail_{check.rule}"
    if check.rule == "grad_from_backward" and outcome.line is None:
        key = "ast_fail_calls_backward"
    return _result(name, check, "fail", 0, msg(key, **values))


def _function(check: FunctionCheck, name: str, ctx: _Context) -> CheckResult:
    total = len(check.cases)
    passed = 0
    first_failure: Text | None = None
    detail: Text | None = None
    status: CheckStatus = "pass"
    for number, case in enumerate(check.cases, start=1):
        expr = function_probe(check.function, case)
        call = f"{check.function}(…)"
        truth = _probe(ctx.expected, expr)
        if truth is None or truth.value is None:
            status = "error"
            first_failure = first_failure or _truth_failure(call, ctx.expected)
            continue
        got = _probe(ctx.run, expr)
        if got is None or got.value is None:
            if (
                got is not None
                and got.error is not None
                and got.error.type == "NameError"
                and check.function in got.error.message
            ):
                return _result(
                    name, check, "fail", 0, msg("function_missing", function=check.function)
                )
            reason = _probe_failure(call, got)
        else:
            result = compare(call, got.value, truth.value, rtol=check.rtol, atol=check.atol,
                             reveal=ctx.reveal)
            if result.ok:
                passed += 1
                continue
            reason, detail = result.message, detail or result.output
        if first_failure is None:
            first_failure = (
                msg(
                    "function_case_failed",
                    function=check.function,
                    case=str(number),
                    total=str(total),
                )
                + T(" ", " ")
                + reason
            )
        if status == "pass":
            status = "fail"
    if passed == total:
        return _result(
            name, check, "pass", 1, msg("function_ok", function=check.function, total=str(total))
        )
    assert first_failure is not None
    return _result(name, check, status, passed / total, first_failure, detail)


def evaluate(
    checks: Sequence[Check],
    code: str,
    tree: ast.Module,
    run: RunResult | None,
    expected: RunResult | None,
    *,
    reveal: bool = True,
) -> list[CheckResult]:
    """A :class:`CheckResult` per check. ``run`` is ``None`` when the code was not run;
    ``reveal=False`` keeps expected values out of the feedback."""
    expects_error = any(isinstance(c, ErrorCheck) for c in checks)
    ctx = _Context(code, tree, run, expected, expects_error, reveal)
    results: list[CheckResult] = []
    seen: dict[str, int] = {}
    provenance_broken: set[str] | None = set()  # whose gradients are written by hand
    if grad_assignments(tree) and any(
        isinstance(c, AstCheck) and c.rule in GRAD_PROVENANCE_RULES for c in checks
    ):
        provenance_broken = hand_written_grads(tree)
    for check in checks:
        name = check_name(check)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        results.append(_evaluate_one(check, name, ctx, provenance_broken))
    return results


def _grads_read(check: Check) -> set[str]:
    """Whose gradients a check reads: ``{"x"}`` for ``x.grad`` or ``x`` with grad_is_none."""
    exprs: list[str] = []
    if isinstance(check, (ValueCheck, AttributeCheck)):
        exprs.append(check.expr)
    if isinstance(check, AttributeCheck) and check.attribute == "grad_is_none":
        exprs.append(f"{check.expr}.grad")
    owners: set[str] = set()
    for expr in exprs:
        try:
            tree = syntax_tree.parse(expr, mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "grad":
                owners.add(ast.unparse(node.value))
    return owners


def _touches_written_grad(check: Check, written: set[str] | None) -> bool:
    """Whether a check reads a gradient the code wrote by hand (``written`` None: any)."""
    read = _grads_read(check)
    return bool(read) and (written is None or bool(read & written))


def _evaluate_one(
    check: Check, name: str, ctx: _Context, provenance_broken: set[str] | None
) -> CheckResult:
    if isinstance(check, AstCheck):
        return _ast(check, name, ctx)
    run = ctx.run
    if run is None:
        return _result(name, check, "error", 0, msg("not_run"))
    if run.outcome in FATAL_OUTCOMES:
        return _result(name, check, "error", 0, run_failure_message(run))
    if isinstance(check, ErrorCheck):
        return _error(check, name, ctx)
    if isinstance(check, NoErrorCheck):
        return _no_error(check, name, ctx)
    if run.outcome == "error" and not ctx.expects_error:
        return _result(name, check, "error", 0, run_failure_message(run))
    if (provenance_broken is None or provenance_broken) and _touches_written_grad(
        check, provenance_broken
    ):
        return _result(name, check, "fail", 0, msg("grad_not_counted"))
    if isinstance(check, ValueCheck):
        return _value(check, name, ctx)
    if isinstance(check, AttributeCheck):
        return _attribute(check, name, ctx)
    if isinstance(check, StdoutCheck):
        return _stdout(check, name, ctx)
    return _function(check, name, ctx)
