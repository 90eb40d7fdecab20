"""The parts of a training program an answer speaks of, in the learner's own names.

A card says ``{optimizer}.step()``, not ``optimizer.step()``: the learner whose code builds
``opt = torch.optim.SGD(...)`` reads ``opt.step()``; one whose question and code name no
optimizer reads "your optimizer's ``.step()``" rather than a variable they do not have
(``roles.yaml`` says how each part is found and worded). Plain stdlib: a question from the
shell is answered without pydantic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("roles.yaml")
_PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")
_CODE_MARKS_RE = re.compile(r"[.(=]")
_NOT_NAMES = frozenset({"torch", "nn", "F", "np", "optim", "autograd", "self", "cls", "super"})
"""What a pattern may catch that names no part of the learner's program."""


@dataclass(frozen=True)
class Role:
    key: str
    words: tuple[str, str]
    """(en, zh)."""
    possessive: tuple[str, str]
    found_by: tuple[str, ...]
    """Regular expressions, compiled on first use (:func:`_patterns`): most questions name
    no part of a program, and compiling them all costs a shell question ~8 ms."""


@lru_cache(maxsize=1)
def roles() -> dict[str, Role]:
    from tutor.data_cache import read_data

    out = {}
    for key, raw in read_data(DATA)["roles"].items():
        out[key] = Role(
            key,
            (raw["en"], raw["zh"]),
            (raw["possessive"]["en"], raw["possessive"]["zh"]),
            tuple(raw["found_by"]),
        )
    return out


@cache
def _patterns(key: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in roles()[key].found_by)


def find_roles(text: str) -> tuple[tuple[str, str], ...]:
    """(role, the learner's name for it) for each part ``text`` (their question and code)
    names, in roles.yaml's order."""
    found: list[tuple[str, str]] = []
    if not _CODE_MARKS_RE.search(text):
        return ()  # words alone name no part of a program (every pattern needs one of these)
    for key in roles():
        for pattern in _patterns(key):
            name = next((m.group("name") for m in pattern.finditer(text)
                         if m.group("name") not in _NOT_NAMES), None)
            if name is not None:
                found.append((key, name))
                break
    return tuple(found)


def _words(key: str, lang: str, possessive: bool = False) -> str:
    role = roles()[key]
    pair = role.possessive if possessive else role.words
    return pair[1] if lang == "zh" else pair[0]


_MEMBER_RE = re.compile(r"\{([a-z_]+)\}\.(.+)")
_ARGUMENT_RE = re.compile(r"\{[a-z_]+\}(?:\.[A-Za-z_]\w*(?:\(\))?)*")


def fill_span(code: str, named: dict[str, str], lang: str) -> str:
    """The inline code ``code`` as shown (backticks included): each role placeholder the
    learner names becomes their name; a span that is only the role, or the role's member
    (``{optimizer}.step()``), becomes words before the member ("your optimizer's
    ``.step()``"); a role inside an expression becomes ``...``."""
    known = roles()

    def named_or_kept(m: re.Match[str]) -> str:
        key = m.group(1)
        return named.get(key, m.group(0)) if key in known else m.group(0)

    code = _PLACEHOLDER_RE.sub(named_or_kept, code)
    left = [k for k in _PLACEHOLDER_RE.findall(code) if k in known]
    if not left:
        return f"`{code}`"
    whole = _PLACEHOLDER_RE.fullmatch(code)
    if whole is not None:
        return _words(whole.group(1), lang)
    member = _MEMBER_RE.fullmatch(code)
    if member is not None and member.group(1) in known:
        rest = _ARGUMENT_RE.sub("...", member.group(2))
        return f"{_words(member.group(1), lang, possessive=True)} `.{rest}`"
    return "`" + _ARGUMENT_RE.sub("...", code) + "`"


def fill_words(text: str, named: dict[str, str], lang: str) -> str:
    """The role placeholders of ``text``'s prose (outside code spans): the learner's name
    as code, else the role's words."""
    known = roles()

    def one(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in known:
            return m.group(0)
        return f"`{named[key]}`" if key in named else _words(key, lang)

    return _PLACEHOLDER_RE.sub(one, text)
