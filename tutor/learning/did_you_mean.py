"""'Did you mean …?' for a name the learner mistyped: ``y.backwards()``, ``torh``, an
answer typed as ``false``. The closest real name by difflib, never a guess beyond it.

Tensor attribute names are data (tensor_names.txt, from ``dir(torch.Tensor)``): the UI
process does not import torch. Every face says it: the app's tabs, ``tutor run``."""

from __future__ import annotations

import builtins
import difflib
import keyword
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from tutor.i18n import Text
from tutor.learning.messages import msg

if TYPE_CHECKING:
    from tutor.sandbox.models import ErrorInfo

_NO_ATTRIBUTE = re.compile(r"'(?P<type>\w+)' object has no attribute '(?P<name>\w+)'")
_NOT_DEFINED = re.compile(r"name '(?P<name>\w+)' is not defined")
LITERALS = ("True", "False", "None")
COMMON_MODULES = ("torch", "nn", "F", "np", "math")


@cache
def tensor_names() -> tuple[str, ...]:
    names = resources.files("tutor.learning").joinpath("tensor_names.txt")
    text = names.read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line and not line.startswith("#"))


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name`` (a case-only difference first), or None when none
    is close enough to be what was meant."""
    pool = [c for c in dict.fromkeys(candidates) if c != name]
    for candidate in pool:
        if candidate.lower() == name.lower():
            return candidate
    by_lower = {c.lower(): c for c in reversed(pool)}
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.75)
    return by_lower[found[0]] if found else None


def for_error(error_type: str, message: str, source_names: Iterable[str] = ()) -> str | None:
    """The name an AttributeError on a tensor or a NameError most likely meant: the call
    written as it should be (``backward()`` for ``y.backwards()``), or None."""
    if error_type == "AttributeError":
        match = _NO_ATTRIBUTE.search(message)
        if match and match["type"] in ("Tensor", "Parameter"):
            return closest(match["name"], tensor_names())
        return None
    if error_type in ("NameError", "UnboundLocalError"):
        match = _NOT_DEFINED.search(message)
        if match:
            pool = [*source_names, *COMMON_MODULES, *dir(builtins), *keyword.kwlist]
            return closest(match["name"], pool)
    return None


def for_answer(typed: str) -> str | None:
    """``True``/``False``/``None`` for an answer typed as a near miss (``false``, ``ture``,
    ``none``): Python's literals are capitalised."""
    word = typed.strip()
    if not word.isidentifier() or word in LITERALS:
        return None
    return closest(word, LITERALS)


def meant_in(error: ErrorInfo, code: str = "") -> str | None:
    """What a run's AttributeError or NameError most likely meant, written as the learner
    would write it: ``backward()`` when the mistyped method was called, the name otherwise
    (the learner's own top-level names first, from ``code``)."""
    from tutor.learning.session import assigned_names

    found = for_error(error.type, error.message, assigned_names(code) if code else [])
    if found is None:
        return None
    attr = error.message.rpartition("attribute '")[2].rstrip("'")
    called = error.type == "AttributeError" and f"{attr}(" in (error.source_line or "")
    return f"{found}()" if called else found


def did_you_mean(error: ErrorInfo | None, code: str = "") -> Text | None:
    """"Did you mean backward()?" for a run's error, or None."""
    meant = meant_in(error, code) if error is not None else None
    return None if meant is None else msg("did_you_mean", name=meant)
