"""A ``torch.distributions`` distribution given a value outside its parameter's constraint:
a ``scale`` that is not positive (a layer's output can be any real number), ``probs`` that
are not probabilities (raw scores given as ``probs``). The message names the parameter and
the constraint; the run's callee evidence gives the distribution's parameters, so the
argument is found in the learner's call whether it was passed by name or by place. The
changes tried follow from the constraint: the value mapped into its range (softplus or exp
for a positive one), or the scores passed as ``logits``.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix, postfix, replace_node
from tutor.diagnosis.flow import Flow, call_name, text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T, Text

CONSTRAINT = re.compile(
    r"^Expected parameter (?P<param>\w+) .*? of distribution (?P<dist>\w+)\(.*?to satisfy the "
    r"constraint (?P<constraint>.+?), but found invalid values", re.DOTALL)
KINDS = {
    "GreaterThan(lower_bound=0.0)": "positive",
    "GreaterThanEq(lower_bound=0.0)": "positive",
    "Simplex()": "simplex",
    "Interval(lower_bound=0.0, upper_bound=1.0)": "unit",
    "HalfOpenInterval(lower_bound=0.0, upper_bound=1.0)": "unit",
}
"""The constraints a value can be mapped into, by how torch writes them."""
REQUIRED = {
    "positive": T("positive", "为正"),
    "simplex": T("probabilities (each row at least 0, summing to 1)",
                 "是概率（每一行都不小于 0 且和为 1）"),
    "unit": T("between 0 and 1", "在 0 到 1 之间"),
}


def _parameters(signature: str) -> list[str]:
    """The parameter names of a signature as ``inspect.signature`` writes it."""
    inner = signature.strip()[1:-1] if signature.strip().startswith("(") else signature
    names = []
    for part in inner.split(","):
        name = part.split("=")[0].split(":")[0].strip().lstrip("*")
        if name.isidentifier():
            names.append(name)
    return names


def _argument(call: ast.Call, param: str, signature: str | None
              ) -> tuple[ast.expr, int | None] | None:
    """The learner's argument for ``param``, and its place when passed by place."""
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value, None
    if signature is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    names = _parameters(signature)
    if param in names and names.index(param) < len(call.args):
        at = names.index(param)
        return call.args[at], at
    return None


def _made(flow: Flow, node: ast.expr, line: int, stmt: ast.stmt) -> ast.stmt | None:
    if not isinstance(node, ast.Name):
        return None
    return flow.assigned_before(node.id, line, stmt) or flow.assigned_before(node.id, line)


def _fixes(ctx: Ctx, kind: str, call: ast.Call, node: ast.expr, param: str,
           place: int | None) -> list[Fix]:
    """The changes to try, most likely first."""
    shown = text(node)
    out: list[Fix] = []

    def swap(new: str, words: Text) -> None:
        edit = replace_node(ctx.code, node, new)
        if edit is not None:
            out.append(Fix((edit,), runs_clean, words))

    if kind == "positive":
        mapped = []
        if "torch" in ctx.flow.imported:
            mapped.append(f"torch.nn.functional.softplus({shown})")
        mapped.append(postfix(node, ".exp()"))
        if "log" in shown.lower():  # a log-scale: exp is what it stands for
            mapped.reverse()
        for new in mapped:
            swap(new, T(f"make `{param}` positive where it is given: `{new}` (line "
                        f"{call.lineno})",
                        f"在传入处让 `{param}` 为正：`{new}`（第 {call.lineno} 行）"))
        return out
    names = [k.arg for k in call.keywords]
    if param == "probs" and "logits" not in names:
        # raw scores given as probabilities: the distribution takes them as logits itself
        new = f"logits={shown}"
        if place is None:
            keyword = next(k for k in call.keywords if k.arg == param)
            edit = replace_node(ctx.code, keyword, new) if hasattr(keyword, "lineno") else None
        elif place == len(call.args) - 1 and not call.keywords:
            edit = replace_node(ctx.code, node, new)
        else:
            edit = None
        if edit is not None:
            out.append(Fix((edit,), runs_clean, T(
                f"pass the scores as logits: `{new}` (line {call.lineno}); the distribution "
                "turns them into probabilities itself",
                f"把分数作为 logits 传入：`{new}`（第 {call.lineno} 行）；分布自己会把它们"
                "变成概率")))
    squash = postfix(node, ".softmax(-1)") if kind == "simplex" else \
        f"torch.sigmoid({shown})" if "torch" in ctx.flow.imported else None
    if squash is not None:
        swap(squash, T(f"turn the scores into probabilities where they are given: `{squash}` "
                       f"(line {call.lineno})",
                       f"在传入处把分数变成概率：`{squash}`（第 {call.lineno} 行）"))
    return out


def check_distribution_constraint(ctx: Ctx) -> list[Candidate]:
    if ctx.error is None or ctx.error.type != "ValueError":
        return []
    found = CONSTRAINT.search(ctx.error.message)
    if found is None:
        return []
    kind = KINDS.get(found["constraint"].strip())
    line, stmt = ctx.failing_statement()
    shown = ctx.error.message[found.end():]
    if kind is None or stmt is None or re.search(r"\bnan\b", shown):
        return []  # nan values: where they came from is the question (another diagnosis)
    dist, param = found["dist"], found["param"]
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and call_name(c) == dist]
    callee = ctx.error.callee
    signature = callee.signature if callee is not None and callee.name.endswith(
        f".{dist}") else None
    for call in calls:
        got = _argument(call, param, signature)
        if got is None:
            continue
        node, place = got
        made = _made(ctx.flow, node, line, stmt)
        fill: dict[str, object] = {
            "line": line, "op": dist, "name": text(node), "param": param,
            "wanted": REQUIRED[kind], "detail": found["constraint"].strip()}
        steps: list[tuple[str, dict[str, object]]] = [("distribution-given", fill)]
        if made is not None and made.lineno != line:
            steps.append(("value-made", {"line": made.lineno, "name": text(node),
                                         "op": ctx.flow.line(made.lineno).strip()}))
        return [Candidate("distribution-constraint", line, 0.85, steps,
                          _fixes(ctx, kind, call, node, param, place), fill)]
    return []


EXCEPTION_CHECKS: tuple[Check, ...] = (check_distribution_constraint,)
SILENT_CHECKS: tuple[Check, ...] = ()
