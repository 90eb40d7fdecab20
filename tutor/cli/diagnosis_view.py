"""How a diagnosis looks in a terminal: plain text for pipes and logs, rich panels for a
console, and the catalog as a table. Shared by ``tutor diagnose`` and ``tutor run``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.cli.messages import msg
from tutor.i18n import Lang, T, Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tutor.diagnosis.catalog import Catalog
    from tutor.diagnosis.models import Diagnosis

SEVERITY_STYLE = {"error": "red", "warning": "yellow", "pitfall": "magenta"}


def _label(key: str, lang: Lang, **values: object) -> str:
    return msg(f"diagnosis.{key}", **values).get(lang)


def _severity(severity: str, lang: Lang) -> str:
    return msg(f"severity.{severity}").get(lang)


def _labelled(key: str, text: str, lang: Lang, form: str = "labelled") -> str:
    """``Fix: text`` (``修改建议：text``): a label of the diagnosis view and its text."""
    return msg(form, label=msg(f"diagnosis.{key}"), text=text).get(lang)


def where_text(diagnosis: Diagnosis) -> Text:
    """Where a diagnosis points, after its title: its line, and the failing line too when the
    root cause is elsewhere."""
    root = diagnosis.root_elsewhere
    if root:
        return msg("at_lines", line=diagnosis.line, root=root)
    return msg("at_line", line=diagnosis.line) if diagnosis.line else T("", "")


def heading(diagnosis: Diagnosis, lang: Lang) -> str:
    """``[error] `loss` is not a scalar ... (line 4)``; where the cause is on another line
    than the error, that line first: ``(line 2; the error shows on line 4)``."""
    where = where_text(diagnosis)
    return msg("diagnosis.heading", severity=msg(f"severity.{diagnosis.severity}"),
               title=diagnosis.title, where=where).get(lang)


def format_diagnosis(diagnosis: Diagnosis, lang: Lang) -> str:
    """Plain text, several lines, no markup: for pipes, logs and JSON-less output."""
    lines = [heading(diagnosis, lang)]
    lines.append(f"  {_labelled('why', diagnosis.explanation.get(lang), lang)}")
    if diagnosis.details is not None:
        lines.append(f"  {_labelled('details', diagnosis.details.get(lang), lang)}")
    if diagnosis.root_line and diagnosis.root_line != diagnosis.line:
        lines.append(f"  {_label('root', lang, line=diagnosis.root_line)}")
    if diagnosis.chain:
        lines.append(f"  {msg('label', label=msg('diagnosis.evidence')).get(lang)}")
        lines.extend(f"    {n}. {step.get(lang)}" for n, step in
                     enumerate(diagnosis.chain, 1))
    fix = diagnosis.fix.get(lang).replace("\n", "\n    ")
    lines.append(f"  {_labelled('fix', fix, lang)}")
    if diagnosis.fix_check is not None:
        lines.append(f"  {_labelled('tried', diagnosis.fix_check.get(lang), lang)}")
    elif diagnosis.fix_verified is False:
        lines.append(f"  {_label('failed' if diagnosis.fix_failed else 'untried', lang)}")
    if diagnosis.tell_apart is not None:
        if diagnosis.alternatives:
            lines.append(f"  {_label('others', lang, ids=', '.join(diagnosis.alternatives))}")
        lines.append(f"  {diagnosis.tell_apart.get(lang)}")
    if diagnosis.lesson_ref:
        lines.append(f"  {_labelled('lesson', diagnosis.lesson_ref, lang)}")
    return "\n".join(lines)


def diagnosis_panel(diagnosis: Diagnosis, lang: Lang) -> RenderableType:
    """A rich panel: title in the border, explanation, values, fix (markdown: code spans and
    fenced code render as code)."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text as RichText

    from tutor.tui.cjk_wrap import Markdown, Wrapped  # Chinese breaks between characters

    parts: list[RenderableType] = [Markdown(diagnosis.explanation.get(lang))]
    if diagnosis.details is not None:
        parts.append(Wrapped(RichText(diagnosis.details.get(lang), style="dim")))
    parts.append(Markdown(_labelled("fix", diagnosis.fix.get(lang), lang, "labelled.bold")))
    if diagnosis.lesson_ref:
        parts.append(RichText(_labelled("lesson", diagnosis.lesson_ref, lang), style="dim"))
    return Panel(
        Group(*parts),
        title=RichText(heading(diagnosis, lang), style="bold"),
        title_align="left",
        border_style=SEVERITY_STYLE.get(diagnosis.severity, "white"),
    )


NEUTRAL_NAMES: dict[str, str] = {
    "var": "`x`", "var_code": "x", "var2": "`y`", "var2_code": "y", "callee": "`layer`",
    "fn": "softmax", "built_self": "`x`", "built_part": "`y`", "tensor": "`x`",
    "tensor_code": "x",
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
    wraps at words (between characters in Chinese)."""
    from rich.markup import escape
    from rich.table import Table

    from tutor.tui.cjk_wrap import Wrapped

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
            f"{_severity(entry.severity, lang)}\n[dim]{kinds}[/dim]",
            Wrapped(neutral(entry.title.get(lang))),
        )
    return table
