"""The diagnosis's root cause in the TUI: the chain of evidence in the Diagnosis tab, and the
editor's cursor on the root-cause line (which may differ from the line that failed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tutor.i18n import Lang
from tutor.tui.labels import label

if TYPE_CHECKING:
    from textual.widgets import TextArea

    from tutor.diagnosis.models import Diagnosis

def root_cause_line(diagnoses: Sequence[Diagnosis]) -> int | None:
    """The first diagnosis's root-cause line (a diagnosis from evidence has one)."""
    return diagnoses[0].root_line if diagnoses else None


def evidence_markdown(diagnosis: Diagnosis, lang: Lang) -> str:
    """The root-cause line, the chain of evidence and what the tried fix showed, as markdown."""
    lines: list[str] = []
    if diagnosis.root_line and diagnosis.root_line != diagnosis.line:
        lines += [f"*{label('root_cause_root', lang, line=diagnosis.root_line)}*", ""]
    if diagnosis.chain:
        lines.append(f"**{label('root_cause_evidence', lang)}**")
        lines += [f"{n}. {step.get(lang)}" for n, step in enumerate(diagnosis.chain, 1)]
        lines.append("")
    if diagnosis.fix_check is not None:
        lines += [f"**{label('root_cause_tried', lang)}** {diagnosis.fix_check.get(lang)}", ""]
    elif diagnosis.fix_verified is False:
        key = "root_cause_failed" if diagnosis.fix_failed else "root_cause_untried"
        lines += [f"*{label(key, lang)}*", ""]
    return "\n".join(lines)


def show_root_cause(editor: TextArea | None, diagnoses: Sequence[Diagnosis]) -> int | None:
    """Put the editor's cursor on the root-cause line and select that line; the line or None."""
    line = root_cause_line(diagnoses)
    if editor is None or line is None or not 1 <= line <= editor.document.line_count:
        return None
    text = editor.document.get_line(line - 1)
    indent = len(text) - len(text.lstrip())
    from textual.widgets.text_area import Selection

    editor.selection = Selection((line - 1, indent), (line - 1, len(text)))
    editor.scroll_cursor_visible(center=True)
    return line
