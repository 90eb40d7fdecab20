"""Silent-bug checks that reason over the training trace of the instrumented re-run
(:mod:`tutor.sandbox.training_trace`), each for a class of bugs rather than one program's
shape: what the run did to its values, gradients, parameters and modules says what is wrong,
and the source only says where to change it.

- a nan/inf traced to the first op that made it from finite values (log of 0, a root or a
  fractional power at 0, a division by 0), forward or backward;
- a loss given what it does not expect, by provenance and by value: probabilities into a loss
  that wants scores, scores into one that wants log-probabilities;
- modules: trained in eval mode, a functional dropout that ignores eval(), one BatchNorm at
  two stages of a forward, a layer that changes its input in place before a skip reads it;
- parameters: gradients erased between passes meant to add up, steps too small to move
  anything, a freeze undone before any step, units that start identical and stay so, a
  tensor attribute that is not a registered parameter.

Every candidate carries a fix whose re-run must show the symptom gone
(:mod:`tutor.diagnosis.symptoms`); a silent-bug candidate whose fix did not is never shown.
"""

from __future__ import annotations

import ast
import math

from tutor import syntax_tree
from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, losses, postfix, replace_node, replace_nodes
from tutor.diagnosis.flow import Flow, call_name, receiver, target_names, text
from tutor.diagnosis.symptoms import (
    accumulates,
    batch_softmax_gone,
    dropout_follows_mode,
    input_kept,
    learns,
    loss_input_fixed_and_learns,
    moves_more,
    nonfinite_gone,
    norms_apart,
    one_sample_gone,
    one_score,
    parameters_move,
    softmax_spreads,
    square_gone,
    squashed_once,
    stays_frozen,
    trains_in_train_mode,
    units_differ,
)
from tutor.diagnosis.training_checks import _drop_activation
from tutor.diagnosis.verify import loss_improves
from tutor.i18n import T, Text
from tutor.sandbox.models import (
    DropoutEvidence,
    Evidence,
    LossInputEvidence,
    NonFiniteEvidence,
    RunResult,
    StepEvidence,
)

EPS = "1e-8"
TORCHES = ("torch", "F", "nn.functional", "functional", "torch.nn.functional")


def _bare(op: str) -> str:
    """``log`` for ``log``, ``log_``, ``__rtruediv__`` -> ``rtruediv``."""
    op = op.strip("_")
    return op[:-1] if op.endswith("_") else op


def _calls_on(flow: Flow, line: int, names: tuple[str, ...]) -> list[ast.Call]:
    return [c for c in flow.calls if c.lineno == line and call_name(c) in names]


def _operand(call: ast.Call) -> ast.expr | None:
    """What a unary tensor function applies to: ``a`` in ``torch.log(a)`` and ``a.log()``."""
    owner = receiver(call)
    if owner is not None and owner not in TORCHES:
        assert isinstance(call.func, ast.Attribute)
        return call.func.value
    return call.args[0] if call.args else None


# -- nan / inf ------------------------------------------------------------------------------
def _reaches(ev: Evidence, bad: NonFiniteEvidence) -> bool:
    """The run showed ``bad`` reach the training: a backward() got a non-finite loss, or a
    gradient went nan/inf. An inf computed where nothing is differentiated (a function
    called on constants after the training) is no cause of a training's nan."""
    if bad.phase == "backward":
        return True
    # what came after it, where the record reaches that far (else all the record holds)
    after = bad.backwards if bad.backwards < len(ev.backwards) else 0
    steps = bad.steps if bad.steps < len(ev.steps) else 0
    return any(isinstance(b.loss, str) for b in ev.backwards[after:]) or any(
        n.phase == "backward" and n.backwards >= after for n in ev.training.nonfinite) or any(
        s.grads_nonfinite for s in ev.steps[steps:])


def _nan_spread(ev: Evidence, bad: NonFiniteEvidence) -> tuple[Text, Text]:
    """What the re-run showed turn nan after ``bad`` (the title's words, and the
    explanation's): the loss only when a backward() got a non-finite loss, the gradients
    only when backward() made a nan/inf gradient or a step saw one, the weights only when
    an optimizer stepped on one. Nothing is said that the run did not show."""
    loss = any(isinstance(b.loss, str) for b in ev.backwards[bad.backwards:])
    grads = bad.phase == "backward" or any(n.phase == "backward" for n in ev.training.nonfinite) \
        or any(s.grads_nonfinite for s in ev.steps)
    weights = any(s.grads_nonfinite for s in ev.steps[bad.steps:])
    both = T("the loss and the gradients turn into nan", "损失和梯度因此变成 nan")
    title = both if loss and grads else (
        T("the loss turns into nan", "损失因此变成 nan") if loss
        else T("the gradients turn into nan", "梯度因此变成 nan"))
    if bad.phase == "forward" and loss:
        why = T("That value is infinite, and what is computed from it (0 × inf, inf − inf) is "
                "nan: the loss is not a number",
                "这个值是无穷大，由它算出的结果（0 × inf、inf − inf）是 nan：损失不再是数字")
    elif bad.phase == "forward":
        why = T("That value is infinite; the loss computed from it stays finite, but backward() "
                "through it multiplies 0 by inf, so the gradients are nan",
                "这个值是无穷大；由它算出的损失仍是有限的，但 backward() 经过它时要用 0 乘以 inf，"
                "所以梯度是 nan")
    else:
        why = T("The forward values are finite, but backward() multiplies by that infinite "
                "slope (and 0 × inf is nan), so the gradients are nan",
                "前向的数值都是有限的，但 backward() 要乘上这个无穷大的斜率（0 × inf 是 nan），"
                "所以梯度是 nan")
    if weights:
        why = T(f"{why.en}, and the optimizer step writes nan into the weights.",
                f"{why.zh}，优化器的 step 会把 nan 写进权重。")
    else:
        why = T(f"{why.en}.", f"{why.zh}。")
    return title, why


WHY_DOMAIN = T("The op's result there is not a number (nan), and so is what is computed from "
               "it.", "该运算在那里的结果不是数字（nan），由它算出的结果也都不是。")
REASONS = {
    ("log", "forward"): T("the log of 0, which is -inf", "0 的对数，即 -inf"),
    ("root", "backward"): T("a square root at 0, whose slope there is infinite",
                            "0 处的平方根，其斜率在那里是无穷大"),
    ("power", "backward"): T("a fractional power at 0, whose slope there is infinite",
                             "0 处的分数次幂，其斜率在那里是无穷大"),
    ("root", "forward"): T("a reciprocal square root of 0, which is inf", "0 的平方根倒数，即 inf"),
    ("divide", "forward"): T("a division by 0", "除以 0"),
    ("divide", "backward"): T("a division by 0, whose slope there is infinite",
                              "除以 0，其斜率在那里是无穷大"),
    ("exp", "forward"): T("the exp of a number too large for float32 (above about 88), "
                          "which is inf", "超出 float32 范围（约 88 以上）的数的 exp，即 inf"),
    ("log-negative", "forward"): T("the log of a negative number, which is nan",
                                   "负数的对数，即 nan"),
    ("root-negative", "forward"): T("the square root of a negative number, which is nan",
                                    "负数的平方根，即 nan"),
    ("power-negative", "forward"): T("a fractional power of a negative number, which is nan",
                                     "负数的分数次幂，即 nan"),
    ("mean-empty", "forward"): T("the mean of an empty tensor (nothing was selected), which "
                                 "is nan", "空张量（什么也没选中）的均值，即 nan"),
}
KINDS = {"log": "log", "log2": "log", "log10": "log", "sqrt": "root", "rsqrt": "root",
         "pow": "power", "truediv": "divide", "div": "divide", "true_divide": "divide",
         "rtruediv": "divide", "reciprocal": "divide", "exp": "exp", "mean": "mean-empty"}
EXP_OVERFLOW = 88.0
"""float32's exp is inf above about 88.7."""


def _singular_sites(flow: Flow, bad: NonFiniteEvidence
                    ) -> list[tuple[str, ast.expr, ast.AST]]:
    """The op's kind, the operand at its singular point and the expression that applies it,
    for each place on the line the trace names that applies this op (the fix trials tell
    apart two of them on one line)."""
    op = _bare(bad.op)
    kind = KINDS.get(op)
    stmt = flow.statement_at(bad.line)
    if kind is None or stmt is None:
        return []
    binary = bad.op.startswith("__")
    found: list[tuple[str, ast.expr, ast.AST]] = []
    if kind == "mean-empty":
        if not any(f.empty for f in bad.operands):
            return []
        for node in ast.walk(stmt):
            base = _operand(node) if isinstance(node, ast.Call) and call_name(
                node) == "mean" and not (node.args[1:] or node.keywords) else None
            if base is not None:
                found.append((kind, base, node))
        return found[:3]
    if kind == "exp":
        facts = bad.operands[0] if bad.operands else None
        if facts is None or facts.high is None or facts.high < EXP_OVERFLOW:
            return []
        for node in ast.walk(stmt):
            base = _operand(node) if isinstance(node, ast.Call) and _bare(
                call_name(node)) == op else None
            if base is not None:
                found.append((kind, base, node))
        return found[:3]
    if kind in ("log", "root", "power"):
        facts = bad.operands[0] if bad.operands else None
        if facts is None or not (facts.zeros or facts.negative):
            return []
        if facts.negative and not facts.zeros:
            kind = f"{kind}-negative"  # nan from a value out of the op's domain, not an edge
        for node in ast.walk(stmt):
            if not binary and isinstance(node, ast.Call) and _bare(call_name(node)) == op and \
                    not (kind.startswith("power") and _whole_power(_exponent(node))):
                base = _operand(node)
                if base is not None:
                    found.append((kind, base, node))
            if binary and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and \
                    not (kind.startswith("power") and _whole_power(node.right)):
                found.append((kind, node.left, node))
        return found[:3]
    divisor = 0 if op in ("rtruediv", "reciprocal") else 1
    facts = bad.operands[divisor] if len(bad.operands) > divisor else None
    if facts is None or not facts.zeros:
        return []
    for node in ast.walk(stmt):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found.append((kind, node.right, node))
        if isinstance(node, ast.Call) and call_name(node) in ("div", "true_divide") and len(
                node.args) >= 2:
            found.append((kind, node.args[1], node))
    return found[:3]


def _exponent(call: ast.Call) -> ast.expr | None:
    """The exponent of ``torch.pow(a, e)`` or ``a.pow(e)``."""
    owner = receiver(call)
    args = call.args if owner is not None and owner not in TORCHES else call.args[1:]
    given = next((k.value for k in call.keywords if k.arg == "exponent"), None)
    return args[0] if args else given


def _whole_power(exponent: ast.expr | None) -> bool:
    """A constant whole exponent of at least 1 (``x ** 2``): its slope is finite at 0."""
    value = exponent.value if isinstance(exponent, ast.Constant) else None
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        value >= 1 and float(value).is_integer()


def _diverged_before(ctx: Ctx, bad: NonFiniteEvidence) -> bool:
    """The loss grew before the nan: a step size that blows up, not an edge of an op."""
    before = [b.loss for b in ctx.evidence.backwards[:bad.backwards]]
    values = [v for v in before if isinstance(v, float)]
    # (a loss that can be negative, a policy's, does not grow by a factor)
    return len(values) >= 3 and values[0] > 0 and values[-1] > values[0] * 1.5


def check_nonfinite(ctx: Ctx) -> list[Candidate]:
    """nan or inf in the loss or the gradients, traced to the first op of the learner's code
    that made it from finite values, where the trace shows the operand at that op's
    singular point (exact zeros) or outside its domain; and where that op is, as a symptom,
    for when no cause is found or none of the changes tried works."""
    if ctx.error is not None:
        return []
    return [*_nonfinite_causes(ctx), *_first_seen(ctx)]


def _nonfinite_causes(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    for bad in ev.training.nonfinite:
        if bad.from_inf or not _reaches(ev, bad):
            continue  # made from infinities, not at a singular point: check_masked_row_nan
        sites = _singular_sites(flow, bad)
        reason = REASONS.get((sites[0][0], bad.phase)) if sites else None
        if _diverged_before(ctx, bad):
            continue
        if reason is None:
            bounded = _outside_domain(ctx, bad)
            if bounded:
                return bounded
            continue
        negative = any(f.negative for f in bad.operands)
        step = "nonfinite-forward" if bad.phase == "forward" else "nonfinite-backward"
        spread, why = _nan_spread(ev, bad)
        def guard(base: ast.expr, negative: bool = negative) -> str:
            return f"({text(base)} + {EPS})" if negative else postfix(base, f".clamp(min={EPS})")

        kind = sites[0][0]
        if kind == "mean-empty":
            return _empty_mean_candidates(ctx, bad, sites, step, reason)
        past = kind.endswith("-negative") and _past_rounding(bad)
        if past and not any(_network_output(flow, base, bad.line) for _, base, _ in sites):
            return []  # the formula, not an edge of the op: where it shows (_first_seen)
        if kind == "exp" or kind.endswith("-negative"):
            return _domain_candidates(ctx, bad, sites, step, reason,
                                      WHY_DOMAIN if kind.endswith("-negative") else why, spread)
        out = []
        for _, base, node in sites:
            name = text(base)
            edit = replace_node(ctx.code, base, guard(base))
            if edit is None:
                continue
            facts = {"line": bad.line, "op": text(node), "name": name, "detail": reason}
            fixes = [Fix((edit,), nonfinite_gone, T(
                f"keep `{name}` away from 0 on line {bad.line}: `{guard(base)}`",
                f"第 {bad.line} 行让 `{name}` 离开 0：`{guard(base)}`"))]
            every = replace_nodes(ctx.code, [(b, guard(b)) for _, b, _ in sites])
            if len(sites) > 1 and base is sites[-1][1] and every is not None:
                # two such ops on the line (a log of p and of 1 - p): each may need it
                names = " and ".join(f"`{text(b)}`" for _, b, _ in sites)
                fixes.append(Fix((every,), nonfinite_gone, T(
                    f"keep {names} away from 0 on line {bad.line}",
                    f"第 {bad.line} 行让 {names.replace(' and ', ' 和 ')} 离开 0")))
            again = _same_elsewhere(ctx, bad, name)
            if again:
                # the same zero divides (or is logged) on other lines the trace saw go nan:
                # each of them needs the guard, or the value stays nan
                edits = [edit, *(e for _, b in again if (e := replace_node(
                    ctx.code, b, guard(b))) is not None)]
                lines = " and ".join(str(n) for n in [bad.line, *(n for n, _ in again)])
                fixes.insert(0, Fix(tuple(edits), nonfinite_gone, T(
                    f"keep `{name}` away from 0 on lines {lines}: `{guard(base)}`",
                    f"第 {lines.replace(' and ', '、')} 行让 `{name}` 离开 0：`{guard(base)}`")))
            out.append(Candidate("nan-from-op", bad.line, 0.9, [(step, facts)], fixes,
                                 {**facts, "why": why, "label": spread}))
        return out
    return []


# -- ops defined on a range: what the op is called, and where it is defined ---------------
BOUNDED = {"acos": T("arccosine", "反余弦"), "arccos": T("arccosine", "反余弦"),
           "asin": T("arcsine", "反正弦"), "arcsin": T("arcsine", "反正弦"),
           "atanh": T("inverse hyperbolic tangent", "反双曲正切"),
           "arctanh": T("inverse hyperbolic tangent", "反双曲正切")}
SPREADS = {"std": T("standard deviation", "标准差"), "var": T("variance", "方差"),
           "std_mean": T("standard deviation", "标准差"), "var_mean": T("variance", "方差")}
UNIT_EPS = "1e-7"
"""How far inside (-1, 1) a clamp keeps an arccosine's input: float32 has 1 - 1e-7 below 1."""


def _outside_domain(ctx: Ctx, bad: NonFiniteEvidence) -> list[Candidate]:
    """nan or an infinite slope from an op given a value outside the range where it is
    defined, by what the trace saw it given: an arccosine or arcsine of a value past ±1 (a
    cosine that rounding took a hair past 1), or at ±1 in backward(); a standard deviation
    or variance of one element (it divides by n - 1 = 0). Each with the change that keeps
    the op inside its range, tried."""
    op = _bare(bad.op)
    facts = bad.operands[0] if bad.operands else None
    stmt = ctx.flow.statement_at(bad.line)
    if facts is None or stmt is None or facts.low is None or facts.high is None:
        return []
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and _bare(call_name(n)) == op]
    if op in BOUNDED:
        edge = facts.high if abs(facts.high) >= abs(facts.low) else facts.low
        past = abs(edge) > 1 if bad.phase == "forward" and op not in ("atanh", "arctanh") \
            else abs(edge) >= 1
        if not past:
            return []
        name, at = BOUNDED[op], f"{edge:.8g}"
        if bad.phase == "forward":
            reason = T(f"the {name.en} of {at}, outside [-1, 1], which is {bad.value}",
                       f"{at} 的{name.zh}（超出 [-1, 1]），即 {bad.value}")
        else:
            reason = T(f"the {name.en} at {at}, where its slope is infinite",
                       f"{at} 处的{name.zh}，其斜率在那里是无穷大")
        # (the op, the node the change replaces, its new source, the operand it names)
        changes = [(call, base, postfix(base, f".clamp(-1 + {UNIT_EPS}, 1 - {UNIT_EPS})"),
                    base) for call in calls if (base := _operand(call)) is not None]
        values = T(f"whose values in this run reach {at}", f"它在这次运行中的值达到 {at}")
        words = T("keep `{name}` inside (-1, 1) on line {line}: `{new}`",
                  "第 {line} 行让 `{name}` 保持在 (-1, 1) 之内：`{new}`")
    elif op in SPREADS and bad.phase == "forward" and facts.numel == 1:
        name = SPREADS[op]
        reason = T(f"the {name.en} of a single value, which divides by n − 1 = 0 and is nan",
                   f"单个值的{name.zh}：它要除以 n − 1 = 0，结果是 nan")
        changes = [(call, call, _with_keyword(call, "correction", "0", drop=("unbiased",)),
                    base) for call in calls if (base := _operand(call)) is not None]
        values = T("which holds a single value in this run", "它在这次运行中只有一个值")
        words = T("compute it with `correction=0` on line {line} (0, not nan, for one value): "
                  "`{new}`",
                  "第 {line} 行用 `correction=0` 计算（只有一个值时得到 0 而不是 nan）：`{new}`")
    else:
        return []
    step = "nonfinite-forward" if bad.phase == "forward" else "nonfinite-backward-at"
    spread, why = _nan_spread(ctx.evidence, bad)
    if bad.phase == "forward":
        why = WHY_DOMAIN
    out = []
    for call, target, new, operand in changes[:3]:
        edit = replace_node(ctx.code, target, new)
        if edit is None:
            continue
        shown = text(operand)
        facts_ = {"line": bad.line, "op": text(call), "name": shown, "detail": reason,
                  "values": values}
        fix = Fix((edit,), nonfinite_gone, T(
            words.en.format(name=shown, line=bad.line, new=new),
            words.zh.format(name=shown, line=bad.line, new=new)))
        out.append(Candidate("nan-outside-domain", bad.line, 0.85, [(step, facts_)], [fix],
                             {**facts_, "why": why, "label": spread}))
    return out


def _with_keyword(call: ast.Call, key: str, value: str, drop: tuple[str, ...] = ()) -> str:
    """The call's source with ``key=value`` among its keywords (replacing ``key`` and the
    ``drop`` ones)."""
    args = [text(a) for a in call.args]
    args += [f"{k.arg}={text(k.value)}" if k.arg else f"**{text(k.value)}"
             for k in call.keywords if k.arg not in (key, *drop)]
    return f"{text(call.func)}({', '.join([*args, f'{key}={value}'])})"


def _first_seen(ctx: Ctx) -> list[Candidate]:
    """Where the run's first nan/inf made from finite values comes from, when no known
    cause matches what the op was given: an honest symptom with its place (the op and its
    line), never a cause. Only where it reaches the training (the loss or a gradient went
    nan/inf) and the loss did not blow up first (a step size: check_lr's)."""
    ev = ctx.evidence
    bad = ev.training.nonfinite[0] if ev.training.nonfinite else None
    if bad is None or bad.from_inf or _diverged_before(ctx, bad) or \
            ctx.flow.statement_at(bad.line) is None:
        # (a nan made from infinities is where the infinities come from: masked-row-nan's)
        return []
    if not _reaches(ev, bad):
        return []
    spread, _ = _nan_spread(ev, bad)
    given = [f for f in bad.operands if f.low is not None and f.high is not None]
    if given:
        ranges = "; ".join(f"{f.low:.6g} to {f.high:.6g}" + (
            " (one element)" if f.numel == 1 else "") for f in given)
        ranges_zh = "；".join(f"{f.low:.6g} 到 {f.high:.6g} 之间的值" + (
            "（一个元素）" if f.numel == 1 else "") for f in given)
        values = T(f"values from {ranges}", ranges_zh)
    else:
        values = T("finite values", "有限的值")
    op = _bare(bad.op)
    fill = {"line": bad.line, "op": op, "value": bad.value, "values": values, "label": spread}
    step = "nonfinite-first" if bad.phase == "forward" else "nonfinite-first-backward"
    return [Candidate("nan-first-seen", bad.line, 0.45, [(step, fill)], [], fill,
                      pinned=True)]


def _empty_mean_candidates(ctx: Ctx, bad: NonFiniteEvidence, sites: list[tuple[
        str, ast.expr, ast.AST]], step: str, reason: Text) -> list[Candidate]:
    """The mean of a selection that can be empty: a sum divided by at least 1 is the same
    mean when something was selected, and 0 (no contribution) when nothing was."""
    out = []
    for _, base, node in sites:
        name = text(base)
        new = f"{postfix(base, '.sum()')} / max({postfix(base, '.numel()')}, 1)"
        edit = replace_node(ctx.code, node, f"({new})")
        if edit is None:
            continue
        facts = {"line": bad.line, "op": text(node), "name": name, "detail": reason}
        out.append(Candidate("nan-from-op", bad.line, 0.85, [(step, facts)], [Fix(
            (edit,), nonfinite_gone, T(
                f"average over at least one element on line {bad.line}: `{new}` (0 when "
                "nothing is selected)",
                f"第 {bad.line} 行至少按一个元素求平均：`{new}`（什么也没选中时为 0）"))],
            {**facts, "why": WHY_DOMAIN}))
    return out


def _same_elsewhere(ctx: Ctx, first: NonFiniteEvidence, name: str
                    ) -> list[tuple[int, ast.expr]]:
    """Other lines where the trace saw the same op go nan/inf on the same operand, written
    the same way (``torch.sum(mask)`` on two lines): (line, that operand)."""
    found: list[tuple[int, ast.expr]] = []
    for bad in ctx.evidence.training.nonfinite:
        if bad.line == first.line or bad.phase != first.phase or _bare(bad.op) != _bare(
                first.op) or any(n == bad.line for n, _ in found):
            continue
        found.extend((bad.line, base) for _, base, _ in _singular_sites(ctx.flow, bad)
                     if text(base) == name)
    return found


def _normalized(ctx: Ctx, line: int) -> bool:
    """The exp computed on ``line`` is divided by its own sum there or on the next lines (a
    softmax written by hand): shifting the exponent by its maximum leaves the ratio as it
    was."""
    stmt = ctx.flow.statement_at(line)
    if stmt is None:
        return False
    names = {t for target in getattr(stmt, "targets", []) for t in target_names(target)}
    near = [s for s in ctx.flow.statements if line <= s.lineno <= line + 2]
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and (
        any(call_name(c) == "sum" for c in ast.walk(n.right)) and (
            text(n.left) in names or isinstance(n.left, ast.Call)))
        for s in near for n in ast.walk(s))


def _network_output(flow: Flow, base: ast.expr, line: int) -> bool:
    """``base`` is what a module returned (``net(x)``, ``self.fc(h)``, or a name assigned
    one): a network's unconstrained output, which a positive-only op needs made positive."""
    if isinstance(base, ast.Name):
        made = flow.assigned_before(base.id, line)
        value = flow.value_of(made) if isinstance(made, ast.stmt) else None
        base = value if value is not None else base
    return isinstance(base, ast.Call) and isinstance(base.func, (ast.Name, ast.Attribute)) and \
        flow.constructor(text(base.func)) is not None


def _domain_fixes(ctx: Ctx, kind: str, base: ast.expr, line: int) -> list[tuple[str, Text]]:
    """New source for ``base`` (what exp, log or sqrt applies to) that keeps it in the op's
    range, with the words for each, most faithful first: a hand-written softmax shifted by
    its maximum (the same values); a value that must be positive made positive where it is
    used (softplus keeps a gradient everywhere), or clamped; an exponent capped."""
    code = text(base)
    if kind == "exp":
        if _normalized(ctx, line):
            return [(f"{postfix(base, '')} - {postfix(base, '')}.max(dim=-1, keepdim=True).values",
                     T("subtract the maximum before the exp (the ratio stays the same)",
                       "在 exp 之前减去最大值（比值不变）"))]
        return [(postfix(base, ".clamp(max=50)"),
                 T("cap the exponent so the exp stays finite", "限制指数，让 exp 保持有限"))]
    clamp = (postfix(base, f".clamp(min={EPS})"), T("clamp the value to be positive",
                                                    "把它截断为正数"))
    if not _network_output(ctx.flow, base, line):
        return [clamp]  # a hair below 0 is rounding: clamped, it is the value it was meant to be
    # a network's output is made positive where the op uses it (softplus keeps its gradient
    # everywhere), or clamped
    return [(f"torch.nn.functional.softplus({code})",
             T("make the value positive where the op uses it (softplus keeps its gradient)",
               "在运算用到它的地方让它为正（softplus 保留梯度）")), clamp]


ROUNDING = 1e-3
"""A value that should be positive, found below 0 by more than this share of its largest
value, is no rounding error: the formula that makes it leaves the op's domain, and a guard
(a clamp, a softplus) would only hide that."""


def _past_rounding(bad: NonFiniteEvidence) -> bool:
    facts = bad.operands[0] if bad.operands else None
    return facts is not None and facts.low is not None and facts.low < -ROUNDING * max(
        abs(facts.high or 0.0), 1.0)


def _domain_candidates(ctx: Ctx, bad: NonFiniteEvidence, sites: list[tuple[str, ast.expr,
                       ast.AST]], step: str, reason: Text, why: Text, spread: Text
                       ) -> list[Candidate]:
    out = []
    operand = bad.operands[0] if bad.operands else None
    reach = (operand.high if sites[0][0] == "exp" else operand.low) if (
        operand is not None and sites) else None
    for kind, base, node in sites:
        name = text(base)
        facts: dict[str, object] = {"line": bad.line, "op": text(node), "name": name,
                                    "detail": reason}
        if reach is not None:
            facts["values"] = T(f"whose values in this run reach {reach:.3g}",
                                f"它在这次运行中的值达到 {reach:.3g}")
        fixes = []
        for new, words in _domain_fixes(ctx, kind, base, bad.line):
            edit = replace_node(ctx.code, base, f"({new})" if kind == "exp" else new)
            if edit is not None:
                fixes.append(Fix((edit,), nonfinite_gone, T(
                    f"{words.en} on line {bad.line}: `{new}`",
                    f"第 {bad.line} 行{words.zh}：`{new}`")))
        if fixes:
            # not an exact zero: the value lies past the op's domain (or its overflow)
            out.append(Candidate("nan-outside-domain" if "values" in facts else "nan-from-op",
                                 bad.line, 0.85, [(step, facts)], fixes,
                                 {**facts, "why": why, "label": spread}))
    return out


# -- what a loss is given ---------------------------------------------------------------------
PROBABILITIES = ("softmax", "_softmax", "sigmoid", "sigmoid_")
LAYER_KINDS = ("Softmax", "Sigmoid")


def _verdict(given: LossInputEvidence) -> tuple[str, str] | None:
    """The diagnosis id and the criterion's name for what a loss was given, or None when
    it got what it expects."""
    producer = given.producer or ""
    if given.loss == "cross_entropy" and producer in ("softmax", "_softmax"):
        return "softmax-before-ce", "CrossEntropyLoss"
    if given.loss == "nll_loss" and producer in ("softmax", "_softmax"):
        return "softmax-before-nll", "NLLLoss"
    if given.loss == "binary_cross_entropy_with_logits" and producer in ("sigmoid", "sigmoid_"):
        return "double-sigmoid", "BCEWithLogitsLoss"
    if given.loss == "nll_loss" and given.log_probs is False and producer not in (
            "log_softmax", "_log_softmax"):
        return "nll-without-log-softmax", "NLLLoss"
    if given.loss == "kl_div" and given.sums_to_one and producer in PROBABILITIES:
        return "kl-div-given-probabilities", "kl_div"
    return None


def check_loss_input(ctx: Ctx) -> list[Candidate]:
    """The tensor a loss was given came out of an activation the loss applies itself (a
    softmax before CrossEntropyLoss, a sigmoid before BCEWithLogitsLoss), or is not the
    log-probabilities NLLLoss wants: by the op that made it, through a Sequential, a forward
    method or a helper, and by its values."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for given in ctx.evidence.training.loss_inputs:
        verdict = _verdict(given)
        if verdict is None:
            continue
        cid, criterion = verdict
        steps: list[tuple[str, dict[str, object]]] = [
            ({"nll-without-log-softmax": "loss-given-scores",
              "kl-div-given-probabilities": "loss-given-not-log"}.get(
                cid, "loss-given-probabilities"),
             {"line": given.line, "op": given.producer, "criterion": criterion,
              "name": given.name, "module": given.producer_module})]
        fill = {"criterion": criterion, "name": given.name}
        expect = loss_input_fixed_and_learns(given.loss)
        if cid == "nll-without-log-softmax":
            sites = _log_softmax_sites(ctx, given)
        else:
            sites = _activation_sites(ctx, given, criterion in ("NLLLoss", "kl_div"))
        for root, edit, describe in sites:
            # the fix at the loss's own line: the title names what the loss is given there
            given_there = given.name if root == given.line != given.producer_line else None
            out.append(Candidate(cid, root, 0.9, steps, [Fix((edit,), expect, describe)],
                                 {**fill, "line": root, "given": given_there}))
    return out


def check_squashed_twice(ctx: Ctx) -> list[Candidate]:
    """A loss given ``sigmoid(p)`` where ``p`` already came out of a sigmoid (or a softmax of
    a softmax): the second activation only shrinks the range (a sigmoid of probabilities stays
    in [0.5, 0.73]), so the loss cannot fall to what the model predicts. The outer one is
    taken away and the change tried. A loss that applies the activation itself
    (BCEWithLogitsLoss, CrossEntropyLoss) is :func:`check_loss_input`'s."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for given in ctx.evidence.training.loss_inputs:
        if not given.squashed_before or given.producer_line is None or _verdict(given):
            continue
        calls = _calls_on(ctx.flow, given.producer_line, ("sigmoid", "softmax", "Sigmoid",
                                                           "Softmax"))
        edit = _drop_activation(ctx, calls[0]) if calls else None
        op = given.producer or given.squashed_before
        facts = {"line": given.producer_line, "op": op,
                 "before_line": given.squashed_before_line or 0}
        fixes = [Fix((edit,), squashed_once, T(
            f"apply the {op} once: `{edit.text.strip()}` on line {edit.line}",
            f"只做一次 {op}：第 {edit.line} 行改为 `{edit.text.strip()}`"))] if edit else []
        out.append(Candidate("sigmoid-twice", given.producer_line, 0.85, [
            ("squashed-twice", facts)], fixes, facts))
    return out


def check_one_sample_ce(ctx: Ctx) -> list[Candidate]:
    """CrossEntropyLoss given N scores in one dimension and N float labels of 0 and 1: it
    read them as ONE sample whose N classes have those probabilities (the shape of a binary
    classifier's outputs), so each sample's label never meets its own score alone. The fix
    tried: the binary loss the shape belongs to, where the criterion is built."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for given in ctx.evidence.training.loss_inputs:
        if given.loss != "cross_entropy" or not given.one_sample or not given.target_binary:
            continue
        probabilities = (given.producer or "") in ("sigmoid", "sigmoid_")
        new = "BCELoss" if probabilities else "BCEWithLogitsLoss"
        site = _criterion_site(ctx.flow, given.line)
        if site is None:
            continue
        node, old = site
        if old != "CrossEntropyLoss":
            new = "binary_cross_entropy" if probabilities else "binary_cross_entropy_with_logits"
        written = text(node)[: -len(old)] + new
        edit = replace_node(ctx.code, node, written)
        if edit is None:
            continue
        fill: dict[str, object] = {"line": node.lineno, "count": given.one_sample,
                                   "name": given.name, "criterion": written}
        steps: list[tuple[str, dict[str, object]]] = [
            ("ce-read-as-one-sample", {"line": given.line, "count": given.one_sample})]
        out.append(Candidate("ce-one-sample", node.lineno, 0.85, steps, [Fix(
            (edit,), one_sample_gone, T(f"use `{written}` on line {node.lineno}",
                                        f"在第 {node.lineno} 行改用 `{written}`"))], fill))
    return out


def check_vector_meets_column(ctx: Ctx) -> list[Candidate]:
    """An element-wise op paired N values of shape (N,) with N of shape (N, 1): broadcasting
    made an (N, N) result, every element against every element, where one result per sample
    was meant (a loss written by hand, an accuracy). The fix tried: the column flattened on
    that line (each operand in turn: the trial keeps the one that makes the square go)."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for crossed in ctx.evidence.training.crossed:
        operands = _elementwise_operands(ctx.flow, crossed.line)
        if crossed.column is not None:  # the learner's name for the column goes first
            operands.sort(key=lambda node: text(node) != crossed.column)
        fixes = []
        for node in operands:
            flat = postfix(node, ".view(-1)")
            edit = replace_node(ctx.code, node, flat)
            if edit is not None:
                fixes.append(Fix((edit,), square_gone, T(
                    f"flatten the column on line {crossed.line}: `{flat}`",
                    f"在第 {crossed.line} 行把列展平：`{flat}`")))
        if not fixes:
            continue
        fill: dict[str, object] = {"line": crossed.line, "count": crossed.n,
                                   "name": crossed.column, "given": crossed.vector}
        steps: list[tuple[str, dict[str, object]]] = [
            ("vector-met-column", {"line": crossed.line, "count": crossed.n, "op": crossed.op})]
        out.append(Candidate("vector-column-broadcast", crossed.line, 0.85, steps, fixes, fill))
    return out


def _elementwise_operands(flow: Flow, line: int) -> list[ast.expr]:
    """The operands of the binary arithmetic and comparisons on ``line`` (outermost
    first), the ones an element-wise op of that line may have been given."""
    stmt = flow.statement_at(line)
    if stmt is None:
        return []
    found: list[ast.expr] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.BinOp):
            found += [node.left, node.right]
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
            found += [node.left, node.comparators[0]]
    return [n for n in found if not isinstance(n, ast.Constant)]


def _criterion_site(flow: Flow, line: int) -> tuple[ast.expr, str] | None:
    """The name to change for the cross-entropy called on ``line``: ``F.cross_entropy``
    there, else the ``CrossEntropyLoss`` its criterion was built with."""
    for call in _calls_on_line(flow, line):
        if call_name(call) == "cross_entropy":
            return call.func, "cross_entropy"
        if isinstance(call.func, (ast.Name, ast.Attribute)):
            built = flow.constructor(text(call.func), "CrossEntropyLoss")
            if built is not None:
                return built.func, "CrossEntropyLoss"
    return None


def _activation_sites(ctx: Ctx, given: LossInputEvidence, nll: bool
                      ) -> list[tuple[int, Edit, Text]]:
    """Where the activation can go: the layer out of its Sequential, the layer's call in
    the forward, the functional call; or, when its result is used elsewhere too, the loss
    given the activation's input instead."""
    flow = ctx.flow
    found: list[tuple[int, Edit, Text]] = []
    if given.producer_module and given.producer_kind in LAYER_KINDS:
        layer = flow.constructor(given.producer_module, given.producer_kind)
        parent = flow.parents.get(layer) if layer is not None else None
        if layer is not None and isinstance(parent, ast.Call) and call_name(
                parent) == "Sequential":
            edit = _layer_out(ctx, layer, parent, nll)
            if edit is not None:
                found.append((layer.lineno, edit, _said(edit, layer.lineno, nll)))
            return found
        if nll and layer is not None and given.producer_kind == "Softmax":
            # a layer kept as an attribute: its log version where it is built
            edit = _log_layer(ctx, layer)
            if edit is not None:
                found.append((layer.lineno, edit, _said(edit, layer.lineno, nll)))
            return found
        calls = [c for c in flow.calls if c.lineno == given.producer_line
                 and text(c.func).split(".")[-1] == given.producer_module.split(".")[-1]]
        if calls and calls[0].args and not nll:
            edit = replace_node(ctx.code, calls[0], text(calls[0].args[0]))
            if edit is not None:
                found.append((edit.line, edit, _said(edit, edit.line, nll)))
        return found
    if given.producer_line is None:
        return found
    calls = _calls_on(flow, given.producer_line, ("softmax", "sigmoid"))
    if not calls:
        return found
    call = calls[0]
    base = _operand(call)
    if given.name and given.producer_line != given.line and base is not None and _used_elsewhere(
            flow, given.name, given.producer_line, given.line):
        at = [n for c in _calls_on_line(flow, given.line) for n in c.args
              if isinstance(n, ast.Name) and n.id == given.name]
        edit = replace_node(ctx.code, at[0], text(base)) if at else None
        if edit is not None:
            found.append((given.line, edit, T(
                f"give the loss on line {given.line} the scores `{text(base)}`, not "
                f"`{given.name}`", f"第 {given.line} 行把分数 `{text(base)}` 而不是 "
                f"`{given.name}` 交给损失")))
    if nll:
        new = "log_softmax"
        edit = replace_node(ctx.code, call.func, text(call.func)[: -len(call_name(call))] + new)
    else:
        edit = _drop_activation(ctx, call)
    if edit is not None:
        found.append((call.lineno, edit, _said(edit, call.lineno, nll)))
    return found


def _said(edit: Edit, line: int, nll: bool) -> Text:
    if edit.kind == "delete":
        return T(f"remove the activation layer on line {line}: the loss applies it itself",
                 f"删除第 {line} 行的激活层：损失函数自己会做这一步")
    shown = edit.text.strip()
    if nll:
        return T(f"use log_softmax on line {line}: `{shown}`",
                 f"第 {line} 行改用 log_softmax：`{shown}`")
    return T(f"give the loss the raw scores (logits) on line {line}: `{shown}`",
             f"第 {line} 行把原始分数（logits）交给损失：`{shown}`")


def _calls_on_line(flow: Flow, line: int) -> list[ast.Call]:
    return [c for c in flow.calls if c.lineno == line]


def _used_elsewhere(flow: Flow, name: str, made: int, loss_line: int) -> bool:
    """``name`` is read on a line other than the loss's, after the line that made it."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and n.lineno not in (made, loss_line) and n.lineno > made
               for n in ast.walk(flow.tree))


def _layer_out(ctx: Ctx, layer: ast.Call, parent: ast.Call, nll: bool) -> Edit | None:
    """The activation layer out of its Sequential (or, for NLLLoss, its log version)."""
    if nll:
        return _log_layer(ctx, layer)
    if parent.lineno == parent.end_lineno:
        return _drop_activation(ctx, layer)
    line = ctx.flow.line(layer.lineno).strip().rstrip(",")
    alone = layer.lineno == layer.end_lineno and line == text(layer) and not any(
        a is not layer and layer.lineno in (a.lineno, getattr(a, "end_lineno", 0))
        for a in parent.args) and layer.lineno not in (parent.lineno, parent.end_lineno)
    if alone:
        return Edit("delete", layer.lineno)
    return _cut_from_line(ctx.code, layer, parent.args)


def _log_layer(ctx: Ctx, layer: ast.Call) -> Edit | None:
    """``nn.Softmax(dim=1)`` -> ``nn.LogSoftmax(dim=1)`` where the layer is built."""
    return replace_node(ctx.code, layer.func, text(layer.func).replace("Softmax", "LogSoftmax"))


def _cut_from_line(code: str, layer: ast.expr, args: list[ast.expr]) -> Edit | None:
    """The line of a Sequential written several layers to a line without ``layer``: it
    goes with the comma before it (a layer before it on the line) or after it."""
    at = args.index(layer)
    before = args[at - 1] if at > 0 else None
    after = args[at + 1] if at + 1 < len(args) else None
    row = layer.lineno
    if layer.end_lineno != row:
        return None
    lines = code.splitlines()
    raw = lines[row - 1].encode("utf-8")
    if before is not None and before.end_lineno == row and before.end_col_offset is not None:
        start, stop = before.end_col_offset, layer.end_col_offset
    elif after is not None and after.lineno == row:
        start, stop = layer.col_offset, after.col_offset
    else:
        return None
    if stop is None:
        return None
    new = (raw[:start] + raw[stop:]).decode("utf-8", "replace")
    return Edit("replace", row, new) if new.strip() else None


def _log_softmax_sites(ctx: Ctx, given: LossInputEvidence) -> list[tuple[int, Edit, Text]]:
    """NLLLoss given scores: CrossEntropyLoss instead (it takes the log-softmax itself), where
    the criterion is built or called."""
    flow = ctx.flow
    found: list[tuple[int, Edit, Text]] = []
    for call in _calls_on_line(flow, given.line):
        name = call_name(call)
        if name == "nll_loss":
            edit = replace_node(ctx.code, call.func, text(call.func)[:-len("nll_loss")]
                                + "cross_entropy")
            if edit is not None:
                found.append((given.line, edit, T(
                    f"use cross_entropy on line {given.line}: it takes the log-softmax of the "
                    "scores itself", f"第 {given.line} 行改用 cross_entropy：它自己会对分数取 "
                    "log-softmax")))
            continue
        for stmt in flow.assignments.get(text(call.func), []):
            value = flow.value_of(stmt)
            if isinstance(value, ast.Call) and call_name(value) == "NLLLoss":
                new = text(value.func)[:-len("NLLLoss")] + "CrossEntropyLoss"
                edit = replace_node(ctx.code, value.func, new)
                if edit is not None:
                    found.append((stmt.lineno, edit, T(
                        f"build the loss as `{new}` on line {stmt.lineno}: it takes the "
                        "log-softmax of the scores itself",
                        f"第 {stmt.lineno} 行改用 `{new}` 构建损失：它自己会对分数取 "
                        "log-softmax")))
    return found


# -- modules ------------------------------------------------------------------------------------
def _receiver_matches(call: ast.Call, module: str) -> bool:
    owner = receiver(call)
    return owner is not None and owner.split(".")[-1] == module.split(".")[-1]


def _function_of(flow: Flow, line: int) -> ast.AST:
    stmt = flow.statement_at(line)
    return flow.scope_of(stmt) if stmt is not None else flow.tree


def check_trained_in_eval(ctx: Ctx) -> list[Candidate]:
    """Forward passes that were trained on ran in eval mode (Dropout off, BatchNorm frozen):
    an ``eval()`` for validation whose model was never put back into training mode."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for call in ev.modules:
        if not (call.backward and not call.training and (call.dropout or call.batchnorm)):
            continue
        evals = [c for c in flow.calls_named("eval") if _receiver_matches(c, call.module)]
        if not evals:
            continue
        off = evals[0]
        switched = receiver(off) or call.module
        # the name the training code uses for the model, where the fix goes
        model = next((n for n in (switched, call.module) if n in flow.line(call.line)),
                     call.module)
        layer = T("Dropout", "Dropout") if call.dropout else T("BatchNorm", "BatchNorm")
        steps: list[tuple[str, dict[str, object]]] = [
            ("trained-in-eval", {"line": call.line, "module": model, "count": call.count,
                                 "detail": layer}),
            ("eval-not-undone", {"line": off.lineno, "module": switched})]
        fill = {"line": off.lineno, "module": switched, "detail": layer}
        for at, edit in _train_again(flow, model, call.line, off):
            out.append(Candidate("train-mode-not-restored", off.lineno, 0.85, steps, [Fix(
                (edit,), trains_in_train_mode, T(
                    f"switch `{model}` back to training mode: `{model}.train()` "
                    f"{'after' if edit.kind == 'insert_after' else 'before'} line {at}",
                    f"把 `{model}` 切回训练模式：在第 {at} 行"
                    f"{'之后' if edit.kind == 'insert_after' else '之前'}调用 "
                    f"`{model}.train()`"))], fill))
        break
    return out


def _train_again(flow: Flow, module: str, forward_line: int, off: ast.Call
                 ) -> list[tuple[int, Edit]]:
    """Where ``module.train()`` goes: after the call (in the training loop) of the function
    that switches it to eval, else just before the forward pass that is trained on."""
    found: list[tuple[int, Edit]] = []
    owner = _function_of(flow, off.lineno)
    stmt = flow.statement_at(forward_line)
    if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt is not None:
        scope = flow.scope_of(stmt)
        for call in flow.calls_named(owner.name):
            site = flow.statement_at(call.lineno)
            if site is not None and flow.scope_of(site) is scope and flow.loops_of(site):
                found.append((site.lineno, Edit("insert_after", site.lineno,
                                                f"{module}.train()")))
                break
    if stmt is not None:
        found.append((stmt.lineno, Edit("insert_before", stmt.lineno, f"{module}.train()")))
    return found


def check_functional_dropout(ctx: Ctx) -> list[Candidate]:
    """A functional dropout inside a module's forward stayed on while the module was in eval
    mode: ``F.dropout`` does not follow ``model.eval()`` unless given ``training=``."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for drop in ctx.evidence.training.dropouts:
        calls = _calls_on(ctx.flow, drop.line, (drop.op,))
        if not calls:
            continue
        call = calls[0]
        if drop.op == "scaled_dot_product_attention":
            out.extend(_attention_dropout(ctx, drop, call))
            continue
        flag = next((k for k in call.keywords if k.arg == "training"), None)
        if flag is not None:
            edit = replace_node(ctx.code, flag.value, "self.training")
        else:
            new = ast.unparse(ast.Call(call.func, call.args, [
                *call.keywords, ast.keyword("training", syntax_tree.parse("self.training").body[0]
                                            .value)]))  # type: ignore[attr-defined]
            edit = replace_node(ctx.code, call, new)
        if edit is None or "self" not in _names_of_scope(ctx.flow, drop.line):
            continue
        model = (drop.module or "").split(".")[0] or None
        out.append(Candidate("dropout-training-flag", drop.line, 0.9, [
            ("dropout-in-eval", {"line": drop.line, "op": text(call.func), "model": model,
                                 "count": drop.count})],
            [Fix((edit,), dropout_follows_mode, T(
                f"let the dropout follow the module's mode: `training=self.training` on line "
                f"{drop.line}", f"让 dropout 跟随模块的模式：第 {drop.line} 行传入 "
                "`training=self.training`"))],
            {"line": drop.line, "op": text(call.func), "model": model}))
    return out


def _attention_dropout(ctx: Ctx, drop: DropoutEvidence, call: ast.Call) -> list[Candidate]:
    """``scaled_dot_product_attention`` drops attention weights whenever its ``dropout_p``
    is above 0: it has no training flag, so the module's mode must choose the rate."""
    given = next((k.value for k in call.keywords if k.arg == "dropout_p"),
                 call.args[4] if len(call.args) > 4 else None)
    if given is None or "self" not in _names_of_scope(ctx.flow, drop.line):
        return []
    rate = text(given)
    edit = replace_node(ctx.code, given, f"{rate} if self.training else 0.0")
    if edit is None:
        return []
    model = (drop.module or "").split(".")[0] or None
    return [Candidate("attention-dropout-in-eval", drop.line, 0.9, [
        ("dropout-in-eval", {"line": drop.line, "op": text(call.func), "model": model,
                             "count": drop.count})],
        [Fix((edit,), dropout_follows_mode, T(
            f"drop attention only in training: `dropout_p={rate} if self.training else 0.0` "
            f"on line {drop.line}", f"只在训练时丢弃注意力：第 {drop.line} 行写成 "
            f"`dropout_p={rate} if self.training else 0.0`"))],
        {"line": drop.line, "op": text(call.func), "model": model, "rate": rate})]


def _names_of_scope(flow: Flow, line: int) -> set[str]:
    scope = _function_of(flow, line)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {a.arg for a in scope.args.args}
    return set()


def check_shared_norm(ctx: Ctx) -> list[Candidate]:
    """One BatchNorm normalizes two stages of the network in one forward pass (the second
    input is computed from the first's output): its running statistics mix both, so the
    model trained in train mode predicts differently in eval mode."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for shared in ctx.evidence.training.shared_norms:
        attr = shared.module.split(".")[-1]
        first, second = shared.lines[0], shared.lines[-1]
        made = [s for s in ctx.flow.assignments.get(f"self.{attr}", [])
                if isinstance(ctx.flow.value_of(s), ast.Call)]
        if not made or first == second:
            continue
        built = made[0]
        fresh = _fresh_name(ctx.flow, attr)
        line_text = ctx.flow.line(built.lineno)
        copy = Edit("insert_after", built.lineno,
                    line_text.strip().replace(f"self.{attr}", f"self.{fresh}", 1))
        use = _rename_on(ctx, second, f"self.{attr}", f"self.{fresh}")
        if use is None:
            continue
        out.append(Candidate("shared-batchnorm", second, 0.85, [
            ("norm-two-stages", {"line": first, "module": f"self.{attr}", "count": second})],
            [Fix((copy, use), norms_apart, T(
                f"give the second stage its own layer: `self.{fresh} = ...` after line "
                f"{built.lineno}, and `self.{fresh}` on line {second}",
                f"给第二个阶段单独一层：在第 {built.lineno} 行之后加 `self.{fresh} = ...`，"
                f"第 {second} 行改用 `self.{fresh}`"))],
            {"line": second, "module": f"self.{attr}", "name": f"self.{fresh}"}))
    return out


def _fresh_name(flow: Flow, attr: str) -> str:
    stem = attr.rstrip("0123456789")
    number = int(attr[len(stem):]) if attr[len(stem):] else 1
    used = {n.split(".")[-1] for n in flow.assignments}
    while True:
        number += 1
        name = f"{stem}{number}" if attr[len(stem):] else f"{attr}_{number}"
        if name not in used:
            return name


def _rename_on(ctx: Ctx, line: int, old: str, new: str) -> Edit | None:
    nodes = [n for n in ast.walk(ctx.flow.tree) if isinstance(n, ast.Attribute)
             and getattr(n, "lineno", 0) == line and text(n) == old]
    return replace_node(ctx.code, nodes[0], new) if nodes else None


def check_changed_input(ctx: Ctx) -> list[Candidate]:
    """A layer changed the tensor it was given in place (an ``inplace=True`` activation
    first in a block) and the caller read that tensor afterwards (a skip connection): it
    reads the changed values, silently."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for changed in ctx.evidence.training.changed_inputs:
        layer = ctx.flow.constructor(changed.inner, changed.inner_kind) if (
            changed.inner and changed.inner_kind) else None
        flag = next((k for k in layer.keywords if k.arg == "inplace"), None) if layer else None
        if layer is None or flag is None:
            continue
        new = ast.unparse(ast.Call(layer.func, layer.args,
                                   [k for k in layer.keywords if k is not flag]))
        edit = replace_node(ctx.code, layer, new)
        if edit is None:
            continue
        out.append(Candidate("inplace-overwrites-input", layer.lineno, 0.85, [
            ("changes-input", {"line": changed.line, "module": changed.module,
                               "name": changed.name}),
            ("read-after-change", {"line": changed.read_line, "name": changed.name})],
            [Fix((edit,), input_kept, T(
                f"make the layer on line {layer.lineno} out of place: `{new}`",
                f"第 {layer.lineno} 行的层不要原地计算：`{new}`"))],
            {"line": layer.lineno, "module": changed.module, "name": changed.name,
             "first_use": changed.read_line}))
    return out


# -- parameters and steps -----------------------------------------------------------------------
def check_erased_accumulation(ctx: Ctx) -> list[Candidate]:
    """Several backward() passes feed each step, so their gradients were meant to add up,
    but the gradients were cleared before each pass: the step uses only the last one. Each
    optimizer's own zero_grad() is the one to move (two optimizers, two of them)."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    erased = [s for s in ev.steps if s.passes >= 2 and s.passes_line is not None
              and s.cleared == s.passes - 1]
    pairs: list[tuple[ast.Call, StepEvidence, ast.stmt]] = []
    for step in erased:
        backward = flow.statement_at(step.passes_line or 0)
        loops = flow.loops_of(backward) if backward is not None else []
        if not loops:
            continue
        loop = loops[0]
        zeros = [c for c in flow.calls_named("zero_grad", "zero_") if c.lineno < (
            step.passes_line or 0) and loop in flow.loops_of(flow.statement_at(c.lineno) or loop)]
        own = [z for z in zeros if receiver(z) == step.optimizer]
        chosen = (own or zeros)[-1] if zeros else None
        if chosen is not None and all(chosen is not pair[0] for pair in pairs):
            pairs.append((chosen, step, loop))
    if not pairs:
        return []
    zero, step, loop = pairs[0]
    step_stmt = flow.statement_at(step.line or 0)
    later = [c for c in flow.calls_named("zero_grad") if step.line and c.lineno > step.line]
    edits: list[Edit] = []
    if later:
        edits.append(Edit("delete", zero.lineno))
    if step_stmt is not None and loop not in flow.loops_of(step_stmt):
        edits.append(Edit("move_before", zero.lineno, to=loop.lineno))
    if step_stmt is not None and not later:
        edits.append(Edit("move_after", zero.lineno, to=step_stmt.lineno))
    fixes = [Fix((e,), accumulates(), T(
        f"clear the gradients once per step, not before every backward(): "
        f"{_moved(e, zero.lineno)}", f"每次 step() 只清零一次梯度，而不是每次 backward() 之前："
        f"{_moved_zh(e, zero.lineno)}")) for e in edits]
    together = _each_after_its_step(flow, pairs)
    if together is not None:
        fixes.insert(0, together)
    out: list[Candidate] = []
    backward = flow.statement_at(step.passes_line or 0)
    if step_stmt is not None and backward is not None and loop not in flow.loops_of(
            step_stmt) and not later and step_stmt.lineno > (loop.end_lineno or loop.lineno) \
            and step_stmt.lineno == step_stmt.end_lineno and _over_the_data(flow, loop):
        # the loop clears and back-propagates each batch as a training loop does, and the
        # step sits after it: a step per batch, left out of the loop, is the likelier intent
        facts = {"line": step_stmt.lineno, "optimizer": step.optimizer,
                 "train_line": loop.lineno, "count": step.passes}
        out.append(Candidate("step-outside-batch-loop", step_stmt.lineno, 0.92, [
            ("passes-per-step", {"line": step.passes_line, "count": step.passes}),
            ("cleared-between", {"line": zero.lineno, "count": step.cleared}),
            ("step-after-loop", facts)], [Fix(
                (Edit("move_after", step_stmt.lineno, to=backward.lineno),), steps_each_pass, T(
                    f"take a step after every backward(): move line {step_stmt.lineno} into the "
                    f"loop of line {loop.lineno}, after line {backward.lineno}",
                    f"每次 backward() 之后都执行一步：把第 {step_stmt.lineno} 行移进第 "
                    f"{loop.lineno} 行的循环，放在第 {backward.lineno} 行之后"))], facts))
    return [*out, Candidate("zero-grad-erases-accumulation", zero.lineno, 0.9, [
        ("passes-per-step", {"line": step.passes_line, "count": step.passes}),
        ("cleared-between", {"line": zero.lineno, "count": step.cleared})],
        fixes, {"line": zero.lineno, "count": step.passes})]


def _over_the_data(flow: Flow, loop: ast.stmt) -> bool:
    """The loop walks the dataset in batches (a DataLoader, ``range(0, len(X), batch)``), as
    a training loop does, not the micro-batches of one batch (``range(accum_steps)``,
    ``batch.split(8)``), whose passes are meant to add up before one step."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    walked = loop.iter
    if isinstance(walked, ast.Call) and call_name(walked) == "enumerate" and walked.args:
        walked = walked.args[0]
    if isinstance(walked, ast.Call) and call_name(walked) == "range":
        return len(walked.args) == 3 and any(
            isinstance(n, ast.Call) and call_name(n) == "len" for n in ast.walk(walked.args[1]))
    if isinstance(walked, ast.Name):
        made = flow.assigned_before(walked.id, loop.lineno, loop)
        value = flow.value_of(made) if made is not None else None
        return isinstance(value, ast.Call) and call_name(value) == "DataLoader"
    return False


def steps_each_pass(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed run takes a step after each backward() pass, and its loss ends lower."""
    ev = fixed.evidence
    if fixed.outcome != "ok" or ev is None or not ev.steps or any(s.passes > 1 for s in ev.steps):
        return None
    falls = loss_improves(original, fixed)
    if falls is None:
        return None
    return T(f"{falls.en}, with a step after every backward() pass",
             f"{falls.zh}，每次 backward() 之后都执行了一步")


def _each_after_its_step(flow: Flow, pairs: list[tuple[ast.Call, StepEvidence, ast.stmt]]
                         ) -> Fix | None:
    """Several optimizers each clearing before every pass: every zero_grad() moved below its
    own optimizer's step() in one change (one moved alone leaves the other erasing)."""
    steps = [flow.statement_at(step.line or 0) for _, step, _ in pairs]
    if len(pairs) < 2 or any(s is None for s in steps):
        return None
    edits: list[Edit] = []
    for (zero, _, _), stmt in zip(pairs, steps, strict=True):
        assert stmt is not None
        edits += [Edit("insert_after", stmt.lineno, flow.line(zero.lineno).strip()),
                  Edit("delete", zero.lineno)]
    lines = [e.line for e in edits]
    if len(set(lines)) != len(lines):
        return None
    moved = ", ".join(str(zero.lineno) for zero, _, _ in pairs)
    below = ", ".join(str(s.lineno) for s in steps if s is not None)
    return Fix(tuple(edits), accumulates(), T(
        f"clear each optimizer's gradients once per step: move lines {moved} below their "
        f"optimizers' step() (lines {below})",
        f"每个优化器每次 step() 只清零一次梯度：把第 {moved} 行移到各自优化器的 step()"
        f"（第 {below} 行）之后"))


def _moved(edit: Edit, line: int) -> str:
    if edit.kind == "delete":
        return f"remove line {line}"
    where = "above" if edit.kind == "move_before" else "below"
    return f"move line {line} {where} line {edit.to}"


def _moved_zh(edit: Edit, line: int) -> str:
    if edit.kind == "delete":
        return f"删除第 {line} 行"
    where = "之前" if edit.kind == "move_before" else "之后"
    return f"把第 {line} 行移到第 {edit.to} 行{where}"


TINY_STEP = 1e-6
"""A step that moves no parameter by more than this fraction of itself does nothing."""


def check_tiny_steps(ctx: Ctx) -> list[Candidate]:
    """Every step moves the parameters by a negligible fraction of themselves and the loss
    stays where it was: the learning rate is orders of magnitude too small for these
    gradients. The rate that would move them by about 1e-3 per step is tried."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    moved = [s.moved for s in ev.steps if s.moved is not None]
    ls = losses(ctx.result)
    if len(moved) < 3 or max(moved) >= TINY_STEP or max(moved) <= 0 or len(ls) < 3:
        return []
    if ls[0] and abs(ls[0] - ls[-1]) / abs(ls[0]) > 0.05:
        return []
    if any(s.grads_none == s.n_params or s.grads_zero == s.n_params for s in ev.steps):
        return []  # no gradient at all is another bug
    power = min(9, max(1, math.ceil(math.log10(1e-3 / max(moved)))))
    out: list[Candidate] = []
    for stmt, name, call in flow.optimizers():
        name = name or ev.steps[0].optimizer  # built and returned by a method
        rate = next((k.value for k in call.keywords if k.arg == "lr"), None)
        if rate is None and len(call.args) >= 2:
            rate = call.args[1]
        value = rate.value if isinstance(rate, ast.Constant) else None
        if rate is None or not isinstance(value, (int, float)) or value <= 0:
            continue
        fixes = []
        for k in (power, power - 1):
            if k < 1:
                continue
            new = f"{value * 10 ** k:g}"
            edit = replace_node(ctx.code, rate, new)
            if edit is not None:
                fixes.append(Fix((edit,), moves_more(10 ** k), T(
                    f"raise the learning rate on line {rate.lineno} to {new}",
                    f"把第 {rate.lineno} 行的学习率提高到 {new}")))
        out.append(Candidate("lr-too-low", rate.lineno, 0.8, [
            ("tiny-steps", {"line": stmt.lineno, "optimizer": name,
                            "detail": f"{max(moved):.1g}"}),
            ("loss-stays", {"loss_first": f"{ls[0]:.6g}", "loss_last": f"{ls[-1]:.6g}"})],
            fixes, {"line": rate.lineno, "lr": text(rate), "detail": f"{max(moved):.1g}",
                    "optimizer": name}))
    return out


def check_freeze_undone(ctx: Ctx) -> list[Candidate]:
    """Parameters frozen (requires_grad=False) are turned back on before any step: the freeze
    does nothing, and the layers meant to stay fixed are trained."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for undone in ctx.evidence.training.unfrozen:
        stmt = ctx.flow.statement_at(undone.line)
        if stmt is None or not undone.params:
            continue
        loop = ctx.flow.parents.get(stmt)
        edits: tuple[Edit, ...] = (Edit("delete", stmt.lineno),)
        if isinstance(loop, ast.For) and len(loop.body) == 1:
            edits = (Edit("delete", stmt.lineno), Edit("delete", loop.lineno))
        names = ", ".join(f"`{n}`" for n in undone.params[:4])
        out.append(Candidate("freeze-undone", undone.line, 0.85, [
            ("frozen-then-unfrozen", {"line": undone.line, "first_use": undone.frozen_line,
                                      "params": names, "count": undone.count})],
            [Fix(edits, stays_frozen(undone.params), T(
                f"do not turn requires_grad back on: remove line {undone.line}",
                f"不要重新开启 requires_grad：删除第 {undone.line} 行"))],
            {"line": undone.line, "first_use": undone.frozen_line, "params": names}))
    return out


INITS = ("zeros_", "ones_", "constant_", "zero_", "fill_")


def check_symmetric_init(ctx: Ctx) -> list[Candidate]:
    """A weight whose rows (the units of a layer) start equal and are still equal after
    training: every unit gets the same gradient, so the layer acts like one unit."""
    if ctx.error is not None:
        return []
    for param in ctx.evidence.params:
        if not (param.rows_same_start and param.rows_same_end and param.in_optimizer
                and param.init_line and len(param.shape) >= 2 and param.shape[0] >= 2):
            continue
        stmt = ctx.flow.statement_at(param.init_line)
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if stmt is None or not isinstance(call, ast.Call) or call_name(call) not in INITS:
            continue
        loop = ctx.flow.parents.get(stmt)
        edits = (Edit("delete", stmt.lineno),) if not (
            isinstance(loop, ast.For) and len(loop.body) == 1) else (
            Edit("delete", stmt.lineno), Edit("delete", loop.lineno))
        return [Candidate("symmetric-init", param.init_line, 0.85, [
            ("rows-identical", {"line": param.init_line, "param": param.name,
                                "count": param.shape[0]})],
            [Fix(edits, units_differ(param.name), T(
                f"keep the default random initialization: remove line {param.init_line}",
                f"保留默认的随机初始化：删除第 {param.init_line} 行"))],
            {"line": param.init_line, "param": param.name, "count": param.shape[0]})]
    return []


def check_unregistered(ctx: Ctx) -> list[Candidate]:
    """A tensor that requires grad, kept on a module as a plain attribute: the loss reaches
    it and backward() gives it a gradient, but parameters() and so the optimizer leave it
    out, and it never changes."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for param in ctx.evidence.params:
        if not (param.unregistered and param.reached and not param.in_optimizer):
            continue
        attr = param.name.split(".")[-1]
        made = [s for s in ctx.flow.assignments.get(f"self.{attr}", [])
                if isinstance(ctx.flow.value_of(s), ast.Call)]
        if not made:
            continue
        stmt = made[0]
        value = ctx.flow.value_of(stmt)
        assert isinstance(value, ast.Call)
        plain = ast.Call(value.func, value.args,
                         [k for k in value.keywords if k.arg != "requires_grad"])
        new = f"{_nn(ctx.code)}.Parameter({ast.unparse(plain)})"
        edit = replace_node(ctx.code, value, new)
        out.append(Candidate("params-not-registered", stmt.lineno, 0.9, [
            ("not-a-parameter", {"line": stmt.lineno, "name": f"self.{attr}"})],
            [Fix((edit,), learns(param.name), T(
                f"register it as a parameter on line {stmt.lineno}: `self.{attr} = {new}`",
                f"第 {stmt.lineno} 行把它登记为参数：`self.{attr} = {new}`"))] if edit else [],
            {"line": stmt.lineno, "name": f"self.{attr}"}))
    return out


def _nn(code: str) -> str:
    return "nn" if ("import torch.nn as nn" in code or "from torch import nn" in code) \
        else "torch.nn"


# -- the loop: what never ran --------------------------------------------------------------
def _loss_name(flow: Flow, loop: ast.stmt, before: int) -> str | None:
    """The loss of a training loop: the last name assigned in it above ``before`` that reads
    like one (``loss``, ``loss_l + loss_c``, a criterion's result)."""
    names = [name for stmt in ast.walk(loop) if isinstance(stmt, ast.Assign)
             and stmt.lineno < before for target in stmt.targets
             for name in ([target.id] if isinstance(target, ast.Name) else [])]
    named = [n for n in names if "loss" in n.lower()]
    return named[-1] if named else None


def check_no_backward(ctx: Ctx) -> list[Candidate]:
    """The optimizer steps, but no backward() ever ran: every step finds no gradient, so
    nothing changes and the loss stays where it started."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or ev.backwards or not ev.steps or any(
            s.grads_none < s.n_params for s in ev.steps):
        return []
    step = flow.statement_at(ev.steps[0].line or 0)
    loops = flow.loops_of(step) if step is not None else []
    if step is None or not loops:
        return []
    loss = _loss_name(flow, loops[0], step.lineno)
    if loss is None:
        return []
    edit = Edit("insert_before", step.lineno, f"{loss}.backward()")
    return [Candidate("backward-missing", step.lineno, 0.85, [
        ("steps-without-gradients", {"line": step.lineno, "count": len(ev.steps)})],
        [Fix((edit,), parameters_move, T(
            f"compute the gradients before the step: `{loss}.backward()` before line "
            f"{step.lineno}", f"在 step() 之前计算梯度：在第 {step.lineno} 行之前调用 "
            f"`{loss}.backward()`"))], {"line": step.lineno, "name": loss})]


def check_no_step(ctx: Ctx) -> list[Candidate]:
    """backward() runs at every pass of a loop and an optimizer was built, but its step()
    never ran: the gradients are computed and nothing changes."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or ev.steps or len(ev.backwards) < 2 or any(
            p.changed for p in ev.params if p.requires_grad):
        return []
    built = flow.optimizers()
    backward = flow.statement_at(ev.backwards[0].line)
    if not built or backward is None or not flow.loops_of(backward):
        return []
    name = built[0][1]
    if not name or name not in flow.visible(backward):
        return []
    edit = Edit("insert_after", backward.lineno, f"{name}.step()")
    return [Candidate("step-missing", backward.lineno, 0.85, [
        ("backward-without-step", {"line": backward.lineno, "count": len(ev.backwards),
                                   "optimizer": name})],
        [Fix((edit,), parameters_move, T(
            f"update the parameters after backward(): `{name}.step()` after line "
            f"{backward.lineno}", f"在 backward() 之后更新参数：在第 {backward.lineno} 行之后调用 "
            f"`{name}.step()`"))], {"line": backward.lineno, "optimizer": name})]


STEPPED = ("round", "floor", "ceil", "trunc", "sign")
"""Ops whose derivative is zero wherever it exists: what flows through them learns nothing."""


def check_zero_gradient_op(ctx: Ctx) -> list[Candidate]:
    """Parameters the loss reaches get a gradient of exactly zero at every step and never
    change: on the way to the loss an op whose derivative is zero everywhere (round, floor,
    sign) stops the gradient. A straight-through estimator keeps the rounded value and
    passes the gradient."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or not ev.steps:
        return []
    idle = [p for p in ev.params if p.reached and p.in_optimizer and not p.grad_none
            and p.changed is False and p.requires_grad]
    if not idle or not any(s.grads_zero for s in ev.steps):
        return []
    out: list[Candidate] = []
    for call in flow.calls_named(*STEPPED):
        base = _operand(call)
        if base is None:
            continue
        inner = text(base)
        through = _straight_through(ctx, call, base)
        if through is None:
            continue
        edits, shown = through
        names = ", ".join(f"`{p.name}`" for p in idle[:3])
        out.append(Candidate("zero-gradient-op", call.lineno, 0.8, [
            ("zero-gradients", {"params": names, "count": len(ev.steps)}),
            ("stepped-op", {"line": call.lineno, "op": text(call.func)})],
            [Fix(edits, learns(idle[0].name), T(
                f"keep the rounded value but pass the gradient through (a straight-through "
                f"estimator) on line {call.lineno}: {shown}",
                f"第 {call.lineno} 行保留取整后的值，但让梯度直接穿过（直通估计器）：{shown}"))],
            {"line": call.lineno, "op": text(call.func), "params": names, "name": inner}))
    return out


def _straight_through(ctx: Ctx, call: ast.Call, base: ast.expr
                      ) -> tuple[tuple[Edit, ...], str] | None:
    """The edits that make ``call`` (``torch.round(base)``) a straight-through estimator, and
    the code to show: ``x + (torch.round(x) - x).detach()`` for a name; for a longer
    expression, computed once into a name of its own on the line before (written three
    times, it would be shown three times and computed three times)."""
    if isinstance(base, ast.Name):
        new = f"{base.id} + ({text(call)} - {base.id}).detach()"
        edit = replace_node(ctx.code, call, f"({new})")
        return ((edit,), f"`{new}`") if edit is not None else None
    flow = ctx.flow
    stmt = flow.statement_at(call.lineno)
    local = (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
    if stmt is None or stmt.lineno != call.lineno or (stmt.end_lineno or 0) != call.lineno \
            or any(isinstance(a, local) for a in flow.ancestors(call)):
        return None  # a name bound inside the expression cannot be computed before it
    taken = flow.names_in(flow.tree)
    name = next((n for n in ("unrounded", "unrounded_value", "before_rounding")
                 if n not in taken), None)
    if name is None:
        return None
    inner = text(call).replace(text(base), name, 1)
    replaced = replace_node(ctx.code, call, f"({name} + ({inner} - {name}).detach())")
    if replaced is None:
        return None
    assign = f"{name} = {text(base)}"
    # the line is replaced first, then the assignment goes above it (apply keeps the order)
    return ((replaced, Edit("insert_before", call.lineno, assign)),
            f"`{assign}`, then `{name} + ({inner} - {name}).detach()`")


def check_flat_softmax(ctx: Ctx) -> list[Candidate]:
    """A softmax over a dimension of size 1: every weight is exactly 1, whatever the scores
    (attention that attends to everything equally, a mixture that only sums). The entries to
    compare lie along the one other dimension with more than one entry (not the batch's);
    where there is none, a single score wants a sigmoid, not a softmax."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for flat in ctx.evidence.training.flat_softmaxes:
        if len(flat.shape) < 2:
            continue
        call = ctx.flow.constructor(flat.module, flat.kind) if (
            flat.module and flat.kind in ("Softmax", "LogSoftmax")) else None
        if call is None:
            found = _calls_on(ctx.flow, flat.line, (flat.op,))
            call = found[0] if found else None
        if call is None:
            continue
        given = next((k.value for k in call.keywords if k.arg == "dim"), None)
        if given is None and call.args and call_name(call)[:1].isupper():
            given = call.args[0]
        elif given is None and len(call.args) >= 2:
            given = call.args[1]
        shape = "(" + ", ".join(str(n) for n in flat.shape) + ")"
        fix = _spread(ctx, call, given, flat.shape, flat.dim)
        if fix is None:
            continue
        out.append(Candidate("softmax-wrong-dim", call.lineno, 0.85, [
            ("flat-softmax", {"line": flat.line, "op": flat.op, "detail": flat.dim,
                              "shape": shape})],
            [fix], {"line": call.lineno, "detail": flat.dim, "shape": shape}))
    return out


def check_batch_softmax(ctx: Ctx) -> list[Candidate]:
    """A softmax over the first dimension of the (N, C) scores a model just gave for N
    samples: each class is compared across the batch, so a sample's probabilities depend on
    the others and its argmax is not its class (a prediction loop, a confusion matrix). The
    dimension of the classes is tried."""
    if ctx.error is not None:
        return []
    out: list[Candidate] = []
    for across in ctx.evidence.training.batch_softmaxes:
        found = _calls_on(ctx.flow, across.line, (across.op,))
        call = found[0] if found else None
        if call is None:
            continue
        given = next((k.value for k in call.keywords if k.arg == "dim"), None)
        if given is None and len(call.args) >= 2:
            given = call.args[1]
        edit = replace_node(ctx.code, given, "1") if given is not None else None
        if edit is None:
            continue
        shape = "(" + ", ".join(str(n) for n in across.shape) + ")"
        facts = {"line": across.line, "op": across.op, "detail": across.dim, "shape": shape}
        out.append(Candidate("softmax-over-batch", call.lineno, 0.8, [("batch-softmax", facts)],
                             [Fix((edit,), batch_softmax_gone, T(
                                 f"normalize over the classes: `dim=1` on line {call.lineno}",
                                 f"在类别这一维上归一化：第 {call.lineno} 行用 `dim=1`"))],
                             {"line": call.lineno, "detail": across.dim, "shape": shape}))
    return out


def _spread(ctx: Ctx, call: ast.Call, given: ast.expr | None, shape: list[int], dim: int
            ) -> Fix | None:
    """The change that makes the softmax compare entries: the dimension that holds them
    (the last one when it has several, else the one other non-batch dimension that does), or,
    for one score per sample, a sigmoid in its place."""
    rank = len(shape)
    wide = [d for d in range(1, rank) if shape[d] > 1 and d != dim % rank]
    line = call.lineno
    if given is not None and wide:
        new = "-1" if shape[-1] > 1 else str(wide[0])
        edit = replace_node(ctx.code, given, new)
        if edit is None:
            return None
        return Fix((edit,), softmax_spreads, T(
            f"normalize over the entries to compare, dimension {new}: `dim={new}` on line "
            f"{line}", f"在要比较的那些元素所在的维度（第 {new} 维）上归一化：第 {line} 行写成 "
            f"`dim={new}`"))
    if wide or call_name(call) not in ("softmax", "Softmax"):
        return None
    if call_name(call) == "Softmax":
        sigmoid: str | None = f"{text(call.func)[: -len('Softmax')]}Sigmoid()"
    else:
        owner = receiver(call)
        base = owner if owner is not None and owner not in TORCHES else (
            text(call.args[0]) if call.args else None)
        sigmoid = f"torch.sigmoid({base})" if base is not None else None
    edit = replace_node(ctx.code, call, sigmoid) if sigmoid is not None else None
    if edit is None:
        return None
    return Fix((edit,), one_score, T(
        f"one score per sample needs a sigmoid, not a softmax: `{sigmoid}` on line {line}",
        f"每个样本只有一个分数时要用 sigmoid，而不是 softmax：第 {line} 行写成 `{sigmoid}`"))


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SOFTMAXES = frozenset({"softmax", "log_softmax"})


def _minus_infinity(node: ast.AST) -> bool:
    """``-float("inf")``, ``float("-inf")``, ``-math.inf``, ``-np.inf``, ``-torch.inf``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        return (isinstance(inner, ast.Call) and call_name(inner) == "float" and bool(
            inner.args) and isinstance(inner.args[0], ast.Constant) and str(
            inner.args[0].value).lower() in ("inf", "infinity")) or (
            isinstance(inner, ast.Attribute) and inner.attr == "inf")
    return isinstance(node, ast.Call) and call_name(node) == "float" and bool(node.args) and \
        isinstance(node.args[0], ast.Constant) and str(node.args[0].value).lower() in (
            "-inf", "-infinity")


def check_masked_row_nan(ctx: Ctx) -> list[Candidate]:
    """A softmax made nan out of -inf scores: every score of a row was masked with -inf
    (a padded sequence with nothing left, an empty sentence), and exp(-inf) / sum of
    exp(-inf) is 0 / 0. The change tried masks with the dtype's lowest finite number
    instead, which gives such a row equal weights and no nan."""
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None:
        return []
    made = next((b for b in ev.training.nonfinite if b.from_inf and b.value == "nan"
                 and _bare(b.op) in SOFTMAXES), None)
    if made is None:
        return []
    # where the -inf comes from: what the run saw make it first, else any masking with -inf
    lines = [b.line for b in ev.training.nonfinite if b.value == "-inf" and not b.from_inf]
    sites = [n for n in ast.walk(flow.tree) if _minus_infinity(n)]
    sites = [n for n in sites if getattr(n, "lineno", 0) in lines] or sites
    changes: list[tuple[ast.AST, str]] = []
    for node in sites:
        parent = flow.parents.get(node)
        call = parent if isinstance(parent, ast.Call) and call_name(parent) in (
            "masked_fill", "masked_fill_") else None
        owner = call.func.value if call is not None and isinstance(
            call.func, ast.Attribute) else None
        lowest = f"torch.finfo({text(owner)}.dtype).min" if owner is not None and \
            "torch" in flow.imported else "-1e9"
        changes.append((node, lowest))
    if not sites:
        return []
    first = sites[0]
    mask_line = getattr(first, "lineno", made.line)
    edits = []
    for node, new in changes:
        edit = replace_node(ctx.code, node, new)
        if edit is not None:
            edits.append(edit)
    lines_shown = ", ".join(str(e.line) for e in edits)
    facts = {"line": mask_line, "op": made.op, "fail_line": made.line, "expr": text(first)}
    fixes = [Fix(tuple(edits), nonfinite_gone, T(
        f"mask with the lowest finite number instead of `{text(first)}` (line "
        f"{lines_shown}): `{changes[0][1]}`; a row with nothing left then gets equal weights, "
        "not nan",
        f"用最小的有限数代替 `{text(first)}` 做掩码（第 {lines_shown} 行）：`{changes[0][1]}`；"
        "全被遮住的行会得到相等的权重，而不是 nan"))] if edits and len(edits) == len(
        {e.line for e in edits}) else []
    return [Candidate("masked-row-nan", mask_line, 0.85, [("nan-from-masked-row", facts)],
                      fixes, facts)]


SILENT_CHECKS: tuple[Check, ...] = (check_nonfinite, check_masked_row_nan, check_loss_input,
                                    check_squashed_twice,
                                    check_batch_softmax,
                                    check_trained_in_eval,
                                    check_functional_dropout, check_shared_norm,
                                    check_changed_input, check_erased_accumulation,
                                    check_tiny_steps, check_freeze_undone, check_symmetric_init,
                                    check_unregistered, check_no_backward, check_no_step,
                                    check_zero_gradient_op, check_flat_softmax,
                                    check_one_sample_ce, check_vector_meets_column)
