"""Errors a user can cause. Every layer raises subclasses; the faces print them as one
clear message (what, where, what to do) with an exit code, never a traceback."""

from __future__ import annotations

from tutor.i18n import Lang, Text


class TutorError(Exception):
    """A problem the user can fix. ``str()`` is the message shown to them.

    ``message`` and ``hint`` may be bilingual :class:`~tutor.i18n.Text`: a layer that does
    not know the user's language raises both, and the face picks one with
    :meth:`message_in` / :meth:`hint_in`. ``.message`` and ``.hint`` stay plain strings
    (the English) for code that reads them; ``.text`` and ``.hint_text`` are both languages.
    """

    exit_code: int = 2

    def __init__(
        self,
        message: str | Text,
        *,
        hint: str | Text | None = None,
        exit_code: int | None = None,
    ):
        self.text = _as_text(message)
        self.hint_text = _as_text(hint) if hint is not None else None
        self.message: str = self.text.en
        self.hint: str | None = self.hint_text.en if self.hint_text is not None else None
        super().__init__(self.message)
        if exit_code is not None:
            self.exit_code = exit_code

    def message_in(self, lang: Lang) -> str:
        return self.text.get(lang)

    def hint_in(self, lang: Lang) -> str | None:
        return self.hint_text.get(lang) if self.hint_text is not None else None

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


def _as_text(text: str | Text) -> Text:
    return Text(en=text, zh=text) if isinstance(text, str) else text
