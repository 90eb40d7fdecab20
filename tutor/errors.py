"""Errors a user can cause. Every layer raises subclasses; the faces print them as one
clear message (what, where, what to do) with an exit code, never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time a Text is recognised by its two fields: no pydantic import
    from tutor.i18n import Lang, Text


class TutorError(Exception):
    """A problem the user can fix. ``str()`` is the message shown to them.

    ``message`` and ``hint`` may be bilingual :class:`~tutor.i18n.Text`: a layer that does
    not know the user's language raises both, and the face picks one with
    :meth:`message_in` / :meth:`hint_in`. ``.message`` and ``.hint`` stay plain strings
    (the English) for code that reads them.
    """

    exit_code: int = 2

    def __init__(
        self,
        message: str | Text,
        *,
        hint: str | Text | None = None,
        exit_code: int | None = None,
    ):
        self.texts = (_as_pair(message), _as_pair(hint) if hint is not None else None)
        self.message: str = self.texts[0][0]
        self.hint: str | None = self.texts[1][0] if self.texts[1] is not None else None
        super().__init__(self.message)
        if exit_code is not None:
            self.exit_code = exit_code

    def message_in(self, lang: Lang | str) -> str:
        return self.texts[0][1] if lang == "zh" else self.texts[0][0]

    def hint_in(self, lang: Lang | str) -> str | None:
        pair = self.texts[1]
        if pair is None:
            return None
        return pair[1] if lang == "zh" else pair[0]

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


def _as_pair(text: str | Text) -> tuple[str, str]:
    if isinstance(text, str):
        return text, text
    return text.en, text.zh
