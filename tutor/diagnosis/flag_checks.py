"""A model that stores a freezing flag for one of its parts (``freeze_backbone``,
``freeze_encoder``, ``bert_frozen``) while nothing acts on it: the part's parameters keep
``requires_grad=True`` and train, and nothing fails. Configs pass such flags through to the
constructor, so the learner believes the part is frozen.

The source gives the flag and the part (``self.<part>``, built in the same ``__init__``); the
run gives the rest: the part's parameters changed in training. The change tried acts on the
flag where it is stored, ``if self.freeze_backbone: self.backbone.requires_grad_(False)``, and
is shown when the part's parameters then stay as they were while the rest still trains: a
flag that is False, or one honoured elsewhere, leaves nothing to show."""

from __future__ import annotations

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Expect, Fix
from tutor.diagnosis.intent import freeze_flags, under
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult


def _part_stays(part: str) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        before, after = original.evidence, fixed.evidence
        if fixed.outcome != "ok" or before is None or after is None:
            return None
        moved = [p.name for p in before.params if under(p.name, part) and p.changed]
        now = [p for p in after.params if under(p.name, part)]
        rest = [p for p in after.params if not under(p.name, part) and p.changed]
        if not moved or not now or any(p.changed for p in now) or not rest:
            return None
        return T(f"with this change the {len(now)} parameters of `{part}` stay as they were, "
                 "and the rest of the model still trains",
                 f"改动后 `{part}` 的 {len(now)} 个参数保持不变，模型的其余部分照常训练")
    return expect


def check_freeze_flag(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    for flag in freeze_flags(ctx.flow):
        moved = [p.name for p in ctx.evidence.params if under(p.name, flag.part) and p.changed]
        if not moved:
            continue  # the part did not train: frozen elsewhere, or the flag is off
        line = flag.stored.end_lineno or flag.stored.lineno
        edit = Edit("insert_after", line, f"if self.{flag.flag}: "
                    f"self.{flag.part}.requires_grad_(False)")
        fill: dict[str, object] = {"line": flag.stored.lineno, "name": flag.flag,
                                   "module": flag.part, "count": len(moved)}
        fix = Fix((edit,), _part_stays(flag.part), T(
            f"act on the flag where it is stored: after line {line}, "
            f"`if self.{flag.flag}: self.{flag.part}.requires_grad_(False)`",
            f"在保存这个标志的地方让它生效：在第 {line} 行之后加上 "
            f"`if self.{flag.flag}: self.{flag.part}.requires_grad_(False)`"))
        out.append(Candidate("freeze-flag-unused", flag.stored.lineno, 0.7,
                             [("flag-stored", fill), ("part-trained", fill)], [fix], fill))
    return out


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_freeze_flag,)
