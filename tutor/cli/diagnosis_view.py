"""How a diagnosis looks in a terminal: plain text for pipes and logs, rich panels for a
console, and the catalog as a table. Shared by ``tutor diagnose`` and ``tutor run``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tutor.i18n import Lang, T, Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tutor.diagnosis.catalog import Catalog
    from tutor.diagnosis.models import Diagnosis

LABELS: dict[str, Text] = {
    "why": T("Why", "原因"),
    "fix": T("Fix", "修改建议"),
    "line": T("line {line}", "第 {line} 行"),
    "details": T("Values", "取值"),
    "lesson": T("Lesson", "课程"),
    "generic": T("(no specific diagnosis)", "（没有具体诊断）"),
    "id": T("ID", "编号"),
    "severity": T("Kind", "类型"),
    "title": T("Title", "标题"),
    "catalog": T("Diagnosis catalog: {count} entries", "诊断目录：共 {count} 条"),
    "pitfall_rule": T("static check", "静态检查"),
    "root": T("Root cause: line {line}", "根本原因：第 {line} 行"),
    "evidence": T("Evidence", "证据"),
    "tried": T("Tried", "已验证"),
    "untried": T("(this fix could not be checked by re-running your program)",
                 "（无法通过重新运行你的程序来验证这个修改）"),
    "others": T("Other possible causes: {ids}", "其他可能的原因：{ids}"),
}
SEVERITY: dict[str, Text] = {
    "error": T("error", "错误"),
    "warning": T("warning", "警告"),
    "pitfall": T("pitfall", "隐患"),
}
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "pitfall": "magenta"}


def _label(key: str, lang: Lang, **values: object) -> str:
    return LABELS[key].get(lang).format(**values)


def heading(diagnosis: Diagnosis, lang: Lang) -> str:
    """``[error] `loss` is not a scalar ... (line 4)``."""
    where = f" ({_label('line', lang, line=diagnosis.line)})" if diagnosis.line else ""
    return f"[{SEVERITY[diagnosis.severity].get(lang)}] {diagnosis.title.get(lang)}{where}"


def format_diagnosis(diagnosis: Diagnosis, lang: Lang) -> str:
    """Plain text, several lines, no markup: for pipes, logs and JSON-less output."""
    lines = [heading(diagnosis, lang)]
    lines.append(f"  {_label('why', lang)}: {diagnosis.explanation.get(lang)}")
    if diagnosis.details is not None:
        lines.append(f"  {_label('details', lang)}: {diagnosis.details.get(lang)}")
    if diagnosis.root_line and diagnosis.root_line != diagnosis.line:
        lines.append(f"  {_label('root', lang, line=diagnosis.root_line)}")
    if diagnosis.chain:
        lines.append(f"  {_label('evidence', lang)}:")
        lines.extend(f"    {n}. {step.get(lang)}" for n, step in
                     enumerate(diagnosis.chain, 1))
    fix = diagnosis.fix.get(lang).replace("\n", "\n    ")
    lines.append(f"  {_label('fix', lang)}: {fix}")
    if diagnosis.fix_check is not None:
        lines.append(f"  {_label('tried', lang)}: {diagnosis.fix_check.get(lang)}")
    elif diagnosis.fix_verified is False:
        lines.append(f"  {_label('untried', lang)}")
    if diagnosis.tell_apart is not None:
        lines.append(f"  {_label('others', lang, ids=', '.join(diagnosis.alternatives))}")
        lines.append(f"  {diagnosis.tell_apart.get(lang)}")
    if diagnosis.lesson_ref:
        lines.append(f"  {_label('lesson', lang)}: {diagnosis.lesson_ref}")
    return "\n".join(lines)


def diagnosis_panel(diagnosis: Diagnosis, lang: Lang) -> RenderableType:
    """A rich panel: title in the border, explanation, values, fix (markdown: code spans and
    fenced code render as code)."""
    from rich.console import Group
    from rich.markdown import Markdown
    from rich.panel import Panel
    from rich.text import Text as RichText

    parts: list[RenderableType] = [Markdown(diagnosis.explanation.get(lang))]
    if diagnosis.details is not None:
        parts.append(RichText(diagnosis.details.get(lang), style="dim"))
    parts.append(Markdown(f"**{_label('fix', lang)}:** {diagnosis.fix.get(lang)}"))
    if diagnosis.lesson_ref:
        parts.append(RichText(f"{_label('lesson', lang)}: {diagnosis.lesson_ref}", style="dim"))
    return Panel(
        Group(*parts),
        title=RichText(heading(diagnosis, lang), style="bold"),
        title_align="left",
        border_style=SEVERITY_STYLE.get(diagnosis.severity, "white"),
    )


NEUTRAL_NAMES: dict[str, str] = {
    "var": "`x`", "var_code": "x", "var2": "`y`", "var2_code": "y", "callee": "`layer`",
    "fn": "softmax",
}


class _Neutral(dict[str, str]):
    """Placeholder values for showing a template without a run: `x`, `y`, ``…``."""

    def __missing__(self, key: str) -> str:
        return NEUTRAL_NAMES.get(key, "…")


def neutral(template: str) -> str:
    return template.format_map(_Neutral())


def catalog_table(catalog: Catalog, lang: Lang) -> RenderableType:
    """Every entry: ID with its lesson under it (both unbreakable names: the ID column is
    as wide as the longest ID anyway, so a ref never folds), kind, and the title, which
    wraps at words (between characters in Chinese, under :func:`cjk_breaks`)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=_label("catalog", lang, count=len(catalog.entries)))
    table.add_column(f"{_label('id', lang)} / {_label('lesson', lang)}", style="cyan",
                     no_wrap=True)
    table.add_column(_label("severity", lang), no_wrap=True)
    table.add_column(_label("title", lang), overflow="fold")
    for entry in catalog.entries:
        if entry.match is not None:
            kinds = "\n".join(entry.match.exception or entry.match.warning or [])
        else:
            kinds = _label("pitfall_rule", lang)
        ref = f"\n[dim]{escape(entry.lesson_ref)}[/dim]" if entry.lesson_ref else ""
        table.add_row(
            f"{escape(entry.id)}{ref}",
            f"{SEVERITY[entry.severity].get(lang)}\n[dim]{kinds}[/dim]",
            escape(neutral(entry.title.get(lang))),
        )
    return table


@contextmanager
def cjk_breaks(lang: Lang) -> Iterator[None]:
    """While printing Chinese, let Rich break lines between CJK characters too (it breaks
    only at spaces, so a Chinese phrase jumped whole to the next line, leaving `x` alone).
    The TUI's pattern, swapped in for the print only: the CLI's English output is untouched."""
    if lang != "zh":
        yield
        return
    import rich._wrap

    from tutor.tui.cjk_wrap import RICH_WORD

    original = rich._wrap.re_word
    rich._wrap.re_word = RICH_WORD  # type: ignore[assignment]
    try:
        yield
    finally:
        rich._wrap.re_word = original
