"""What an instrumented run shows, said plainly, for a program in which no check found a
mistake: the losses backpropagated and where they went, what each optimizer stepped and
moved, the parameters nothing trained, the first nan. Not a diagnosis: the facts a learner
compares with what the program should do, instead of a bare "nothing found" that reads as a
clean bill."""

from __future__ import annotations

import math
from collections import defaultdict

from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence

MAX_LINES = 5


def _number(value: float) -> str:
    return f"{value:.4g}"


def _trend(first: float, last: float) -> Text:
    if not (math.isfinite(first) and math.isfinite(last)):
        return T("not finite", "不是有限值")
    scale = max(abs(first), abs(last), 1e-12)
    if abs(last - first) <= 0.02 * scale:
        return T("about the same", "几乎不变")
    return T("falling", "下降") if last < first else T("rising", "上升")


def _owners(names: list[str]) -> list[str]:
    """Parameter names grouped by the module that holds them (``net.0.weight`` -> ``net``)."""
    return list(dict.fromkeys(n.rsplit(".", 2)[0] if n.count(".") >= 2 else n.rsplit(".", 1)[0]
                              for n in names))


def run_summary(ev: Evidence) -> list[Text]:
    """The facts of the run, a line each (at most :data:`MAX_LINES`); empty when the run
    trained nothing (no backward())."""
    if not ev.backwards:
        return []
    lines: list[Text] = []
    losses: dict[int, list[float]] = defaultdict(list)
    names: dict[int, str] = {}
    for b in ev.backwards:
        names.setdefault(b.line, b.name or "")
        if isinstance(b.loss, float):
            losses[b.line].append(b.loss)
    for line, values in list(losses.items())[:2]:
        name = f"`{names[line]}`" if names[line] else "the loss"
        name_zh = f"`{names[line]}`" if names[line] else "损失"
        if len(values) == 1:  # one pass: a value, not a trend
            lines.append(T(
                f"the loss backpropagated on line {line} ({name}) was {_number(values[0])}, "
                "in one backward pass",
                f"第 {line} 行反向传播的损失（{name_zh}）为 {_number(values[0])}，"
                "只反向传播了一次"))
            continue
        trend = _trend(values[0], values[-1])
        lines.append(T(
            f"the loss backpropagated on line {line} ({name}) went from {_number(values[0])} "
            f"to {_number(values[-1])} (the last value recorded): {trend.en}",
            f"第 {line} 行反向传播的损失（{name_zh}）从 {_number(values[0])} 变为 "
            f"{_number(values[-1])}（记录到的最后一个值）：{trend.zh}"))
    optimizers = list(dict.fromkeys(step.optimizer for step in ev.steps))
    params = {p.name: p for p in ev.params}
    for optimizer in optimizers[:2]:
        held = next(s.params for s in ev.steps if s.optimizer == optimizer)
        still = [n for n in held if n in params and params[n].changed is False]
        shown = ", ".join(f"`{n}`" for n in still[:3])
        shown_zh = "、".join(f"`{n}`" for n in still[:3])
        rest = (T(f": {len(still)} of them never changed ({shown})",
                  f"：其中 {len(still)} 个从未改变（{shown_zh}）")
                if still else T(": all of them changed", "：它们都改变了"))
        lines.append(T(f"`{optimizer}` steps {len(held)} parameters{rest.en}",
                       f"`{optimizer}` 更新 {len(held)} 个参数{rest.zh}"))
    idle = [p.name for p in ev.params if p.requires_grad and not p.in_optimizer
            and not p.reached and not p.changed]
    if idle:
        owners = ", ".join(f"`{o}`" for o in _owners(idle)[:3])
        owners_zh = "、".join(f"`{o}`" for o in _owners(idle)[:3])
        lines.append(T(f"{len(idle)} parameters ({owners}) are in no optimizer, no backward() "
                       "reached them, and they never changed",
                       f"有 {len(idle)} 个参数（{owners_zh}）不在任何优化器中，没有 backward() "
                       "到达它们，也从未改变"))
    first = ev.training.nonfinite[0] if ev.training.nonfinite else None
    lines.append(T(f"the first nan or inf appeared on line {first.line}",
                   f"第一个 nan 或 inf 出现在第 {first.line} 行") if first is not None
                 else T("no nan or inf appeared", "没有出现 nan 或 inf"))
    return lines[:MAX_LINES]
