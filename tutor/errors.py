"""Errors a user can cause. Every layer raises subclasses; the faces print them as one
clear message (what, where, what to do) with an exit code, never a traceback."""

from __future__ import annotations


class TutorError(Exception):
    """A problem the user can fix. ``str()`` is the message shown to them."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"
