"""Silent bugs where the program's own code says what it meant and the run shows it did not
happen: a freezing loop that sets a misspelt attribute (``param.require_grad = False``),
which Python accepts as a new attribute, so the parameters are never frozen."""

from __future__ import annotations

from tutor.diagnosis.candidate import Candidate, Ctx
from tutor.diagnosis.fixes import Fix, replace_in_line
from tutor.diagnosis.intent import read_intent, under
from tutor.diagnosis.verify import params_frozen
from tutor.i18n import T


def check_requires_grad_misspelt(ctx: Ctx) -> list[Candidate]:
    """A misspelt ``requires_grad`` write meant to freeze parameters the re-run shows still
    requiring grad and given gradients by backward()."""
    if ctx.error is not None or not ctx.evidence.backwards:
        return []
    out = []
    for freeze in read_intent(ctx.flow).frozen:
        if not freeze.misspelt:
            continue
        live = [p for p in ctx.evidence.params
                if under(p.name, freeze.prefix) and p.requires_grad and not p.grad_none]
        if not live:
            continue  # the run does not show them unfrozen: nothing to say
        names = [p.name for p in live]
        shown = ", ".join(f"`{n}`" for n in names[:4])
        edit = replace_in_line(ctx.code, freeze.line, rf"\.{freeze.spelled}\b", ".requires_grad")
        fixes = [Fix((edit,), params_frozen(names), T(
            f"spell it `requires_grad` on line {freeze.line}",
            f"第 {freeze.line} 行写成 `requires_grad`"))] if edit is not None else []
        fill = {"line": freeze.line, "name": f"`{freeze.spelled}`", "params": shown}
        out.append(Candidate("requires-grad-misspelt", freeze.line, 0.9, [
            ("misspelt-attribute", fill), ("still-trainable", fill)], fixes, fill))
    return out
