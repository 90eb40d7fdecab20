"""The diagnosis's root cause in the TUI: the chain of evidence in the Diagnosis tab, and the
editor's cursor on the root-cause line (which may differ from the line that failed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tutor.i18n import Lang, T

if TYPE_CHECKING:
    from textual.widgets import TextArea

    from tutor.diagnosis.models import Diagnosis

LABELS = {
    "root": T("Root cause: line {line}", "根本原因：第 {line} 行"),
    "evidence": T("Evidence", "证据"),
    "tried": T("Tried", "已验证"),
    "untried": T("This fix could not be checked by re-running your program.",
                 "无法通过重新运行你的程序来验证这个修改。"),
    "failed": T("This change was tried on your program and did not fix it: a lead, not the "
                "answer.", "这个修改已在你的程序上试过，但没有解决问题：它只是线索，不是答案。"),
}


def root_cause_line(diagnoses: Sequence[Diagnosis]) -> int | None:
    """The first diagnosis's root-cause line (a diagnosis from evidence has one)."""
    return diagnoses[0].root_line if diagnoses else None


def evidence_markdown(diagnosis: Diagnosis, lang: Lang) -> str:
    """The root-cause line, the chain of evidence and what the tried fix showed, as markdown."""
    lines: list[str] = []
    if diagnosis.root_line and diagnosis.root_line != diagnosis.line:
        lines += [f"*{LABELS['root'].get(lang).format(line=diagnosis.root_line)}*", ""]
    if diagnosis.chain:
        lines.append(f"**{LABELS['evidence'].get(lang)}**")
        lines += [f"{n}. {step.get(lang)}" for n, step in enumerate(diagnosis.chain, 1)]
        lines.append("")
    if diagnosis.fix_check is not None:
        lines += [f"**{LABELS['tried'].get(lang)}** {diagnosis.fix_check.get(lang)}", ""]
    elif diagnosis.fix_verified is False:
        label = LABELS["failed" if diagnosis.fix_failed else "untried"]
        lines += [f"*{label.get(lang)}*", ""]
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
