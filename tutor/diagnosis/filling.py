"""Filling the catalog's words with what one run showed, so no placeholder reaches a learner.

A value is known or it is None. A template is used only when every placeholder it has (in
both languages) is known; otherwise the entry's next variant, written without that fact, is
tried (:meth:`tutor.diagnosis.catalog.Entry.options`), and a text none of whose variants fit
is not shown at all. Chinese comes out without the spaces a template leaves between Chinese
words ("该张量 的形状").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

from tutor.cjk import UNSPACED
from tutor.diagnosis.catalog import placeholders
from tutor.diagnosis.models import SHOWN_TEXTS, Diagnosis
from tutor.i18n import Lang, Text

Values = Mapping[str, object]
"""Placeholder -> value: a string or number (the same in both languages), a Text, or None
when the run did not show it."""

CODE_SPAN = re.compile(r"(`[^`\n]*`)")
CLOSING_MARKS = "，。、；：！？）》」』】"
OPENING_MARKS = "（《「『【"


@cache
def stray_space() -> re.Pattern[str]:
    return re.compile(rf"(?<=[{UNSPACED}])[ \t]+(?=[{UNSPACED}])|[ \t]+(?=[{CLOSING_MARKS}])"
                      rf"|(?<=[{OPENING_MARKS}{CLOSING_MARKS}])[ \t]+(?=\S)")


def tidy_chinese(text: str) -> str:
    """Chinese without stray spaces: none between two Chinese characters or marks, none
    before a closing mark or after a mark; names listed as code spans joined by 、 rather
    than the English ", " the code joined them with for both languages; code spans stay as
    written."""
    if not text or max(text) < "\u2e80":
        return text
    pieces = CODE_SPAN.split(text)  # prose, code, prose, code, ..., prose

    def tidy(i: int, piece: str) -> str:
        if piece.startswith("`"):
            return piece
        if piece == ", " and 0 < i < len(pieces) - 1:
            return "、"
        return stray_space().sub("", piece)

    return "".join(tidy(i, piece) for i, piece in enumerate(pieces))


def tidied(diagnosis: Diagnosis) -> Diagnosis:
    """The diagnosis with all its Chinese tidied (words a check built in code, a tried fix or
    what its re-run showed, keep the rule the catalog's words keep), each chain step once."""
    def tidy(text: Text) -> Text:
        return Text(en=text.en, zh=tidy_chinese(text.zh))

    update: dict[str, object] = {field: tidy(value) for field in SHOWN_TEXTS
                                 if (value := getattr(diagnosis, field)) is not None}
    # a step two evidence steps both wrote (a fix and its follow-up) is said once
    steps = {step.en: step for step in diagnosis.chain}
    update["chain"] = [tidy(step) for step in steps.values()]
    return diagnosis.model_copy(update=update)


def known(values: Values) -> set[str]:
    return {key for key, value in values.items() if value is not None}


def fits(template: Text, values: Values) -> bool:
    return placeholders(template.en) | placeholders(template.zh) <= known(values)


def fill(template: Text, values: Values) -> Text:
    """The template in both languages (a Text value gives each language its own words).
    Every placeholder must be known: see :func:`fits`."""
    def language(lang: Lang) -> dict[str, str]:
        return {key: value.get(lang) if isinstance(value, Text) else str(value)
                for key, value in values.items() if value is not None}

    return Text(en=template.en.format_map(language("en")),
                zh=tidy_chinese(template.zh.format_map(language("zh"))))


def first_fitting(options: Iterable[Text], values: Values) -> Text | None:
    """The first of the options whose placeholders are all known, filled; None if none is."""
    for option in options:
        if fits(option, values):
            return fill(option, values)
    return None
