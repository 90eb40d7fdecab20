"""Whether a catalog entry's fix, as shown, proposes a concrete change to this program or a
procedure to follow.

A concrete change is written with the run's facts in its code (`{name}.append({op}.item())`,
`in_channels={got}`, `torch.mm({var_code}, {var2_code}.t())`): when a re-run refuted the
change that fits the error, such advice is the refuted change, and it is not shown. A
procedure names no fact of the run in code, or only to look at values (`print({var_code}
.shape)`, `nn.ModuleList`, `requires_grad=True`): it stays sound whatever one change did.
"""

from __future__ import annotations

import ast
import re

from tutor import syntax_tree
from tutor.diagnosis.catalog import Entry, load_catalog, placeholders
from tutor.diagnosis.filling import tidy_chinese
from tutor.diagnosis.models import Diagnosis
from tutor.i18n import Text

CODE_SPAN = re.compile(r"`([^`\n]+)`")
LOOKING = frozenset({"print", "type", "len", "isinstance", "id", "repr"})
"""Calls that look at values without changing what the program does."""
LOOKING_METHODS = frozenset({"size", "dim", "numel", "type", "is_contiguous", "stride",
                             "data_ptr", "element_size", "nelement", "tolist", "item"})
"""Methods that read a tensor: a snippet ending in one is no change to try."""


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z_0-9]+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts) + r"\Z", re.DOTALL)


def _looks_only(span: str) -> bool:
    """A span whose code only looks at values: ``print(x.shape)``."""
    try:
        node = syntax_tree.parse(span.replace("{", "").replace("}", ""), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id in LOOKING)


def _names_only(span: str) -> bool:
    """A span that only names something (``nn.{module}``, `{model}`): no call, no
    assignment, nothing it would change."""
    try:
        node = syntax_tree.parse(re.sub(r"\{[a-z_0-9]+\}", "x", span), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Attribute))


def concrete(template: str) -> bool:
    """The template writes a fact of the run into code that changes the program."""
    return any(placeholders(span) and not _looks_only(span) and not _names_only(span)
               for span in CODE_SPAN.findall(template))


def proposes_change(entry: Entry, shown: Text) -> bool:
    """The entry's fix words that gave ``shown`` (the first of its options whose template
    fits it) write a fact of the run into changing code; False when none fits (the words
    came from elsewhere: no catalog template is judged)."""
    for option in entry.options("fix"):
        if _template_regex(option.en).match(shown.en):
            return concrete(option.en)
    return False


def _capturing(template: str) -> re.Pattern[str]:
    """The template as a regex that captures each placeholder's words (a second use of one
    must repeat them); spaces a tidied Chinese text may have lost match nothing too."""
    out: list[str] = []
    seen: set[str] = set()
    for part in re.split(r"(\{[a-z_0-9]+\})", template):
        name = part[1:-1] if re.fullmatch(r"\{[a-z_0-9]+\}", part) else None
        if name is None:
            out.append(re.escape(part).replace("\\ ", r"\s*"))
        else:
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def filled(entry: Entry, shown: Text) -> tuple[Text, dict[str, str], dict[str, str]] | None:
    """The entry's fix words that gave ``shown``, with the words each placeholder was filled
    with (English, Chinese); None when none of its words gave it."""
    for option in entry.options("fix"):
        en, zh = _capturing(option.en).match(shown.en), _capturing(option.zh).match(shown.zh)
        if en is not None and zh is not None:
            return option, en.groupdict(), zh.groupdict()
    return None


def subject_snippets(entry: Entry, shown: Text) -> list[tuple[str, str]]:
    """The code of ``shown`` (the entry's fix as filled for a run) that is a method chain on
    the subject (`image.unsqueeze(0)`), as (subject, snippet): a change that can be tried by
    putting the snippet where the failing line uses the subject."""
    found = filled(entry, shown)
    if found is None:
        return []
    option, words, _ = found
    out = []
    for span in CODE_SPAN.findall(option.en):
        last = re.fullmatch(r".*\.(\w+)\(.*\)", span)
        if last is None or last.group(1) in LOOKING_METHODS:
            continue  # `x.shape`, `x.size()`: a look at the value, no change to try
        for key in ("var_code", "var_base_code"):
            if span.startswith("{" + key + "}.") and key in words and "..." not in span:
                try:
                    out.append((words[key], span.format_map(words)))
                except (KeyError, ValueError):
                    continue
    return list(dict.fromkeys(out))


def untried_direction(entry: Entry, shown: Text) -> Text | None:
    """``shown``, the entry's fix as filled for a run, written without the code it puts the
    run's facts in, when no trial checked that code: the first of the entry's fix words that
    is a direction (:func:`concrete` is false), filled with the same facts. None when
    ``shown`` already is one, or no such words fit."""
    options = entry.options("fix")
    found = filled(entry, shown)
    if found is None or not concrete(found[0].en):
        return None
    _, words_en, words_zh = found
    for other in options:
        needed = placeholders(other.en) | placeholders(other.zh)
        if not concrete(other.en) and needed <= words_en.keys() and needed <= words_zh.keys():
            return Text(en=other.en.format_map(words_en),
                        zh=tidy_chinese(other.zh.format_map(words_zh)))
    return None


def _untried_entry(diagnosis: Diagnosis) -> Entry | None:
    """The catalog entry whose words a diagnosis shows, when no trial verified its fix."""
    if diagnosis.fix_verified or diagnosis.generic:
        return None
    return next((e for e in load_catalog().entries if e.id == diagnosis.id), None)


def shows_untried_code(diagnosis: Diagnosis) -> bool:
    """The fix writes the run's facts into a change no trial verified."""
    entry = _untried_entry(diagnosis)
    return entry is not None and proposes_change(entry, diagnosis.fix)


def as_tried(diagnosis: Diagnosis) -> Diagnosis:
    """The diagnosis with no untried code in its fix: catalog words that write the run's
    facts into a change (``loss.sum().backward()``) are shown only when a trial verified a
    change; otherwise the entry's words that say the same as a direction."""
    entry = _untried_entry(diagnosis)
    direction = untried_direction(entry, diagnosis.fix) if entry is not None else None
    return diagnosis if direction is None else diagnosis.model_copy(update={"fix": direction})
