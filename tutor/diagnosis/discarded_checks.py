"""A backward() whose gradients no optimizer step ever uses: it runs after the step of its
iteration, and the next iteration's ``zero_grad()`` clears what it computed before the next
step. The re-run shows it per step: the passes since the last step, in order, and which of
them the following pass found cleared. The fix puts the step after that backward()."""

from __future__ import annotations

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix
from tutor.diagnosis.symptoms import every_pass_used
from tutor.i18n import T


def check_discarded_backward(ctx: Ctx) -> list[Candidate]:
    ev, flow = ctx.evidence, ctx.flow
    if ctx.error is not None or len(ev.steps) < 2:
        return []
    lasts = {s.line for s in ev.steps}
    discarded: dict[int, int] = {}
    for step in ev.steps:
        for line in step.discarded:
            discarded[line] = discarded.get(line, 0) + 1
    out: list[Candidate] = []
    for line, count in discarded.items():
        first = next((s for s in ev.steps if line in s.discarded), None)
        if count < 2 or first is None or first.line is None or line in lasts:
            continue
        step, step_line = first, first.line
        backward = flow.statement_at(line)
        stepping = flow.statement_at(step_line)
        if backward is None or stepping is None or stepping.lineno > backward.lineno or \
                flow.parents.get(stepping) is not flow.parents.get(backward):
            continue  # the step must sit before that backward() in the same block
        facts = {"line": stepping.lineno, "fail_line": backward.lineno, "count": count,
                 "optimizer": step.optimizer}
        out.append(Candidate("gradients-discarded", stepping.lineno, 0.85, [
            ("pass-discarded", facts)], [Fix(
                (Edit("move_after", stepping.lineno, to=backward.end_lineno or backward.lineno),),
                every_pass_used, T(
                    f"step after every backward(): move line {stepping.lineno} below line "
                    f"{backward.end_lineno or backward.lineno}",
                    f"在所有 backward() 之后再 step()：把第 {stepping.lineno} 行移到第 "
                    f"{backward.end_lineno or backward.lineno} 行之后"))], facts))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_discarded_backward,)
