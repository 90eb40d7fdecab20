"""Tokens for retrieval: English words, Chinese character bigrams and API identifiers.

Chinese has no spaces, so a run of CJK characters is indexed as overlapping bigrams (a lone
character as itself). Identifiers such as ``x.grad`` or ``torch.no_grad()`` yield the whole
dotted name, each part, and the attribute form ``.grad`` so "x.grad" and "y.grad" meet.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from functools import lru_cache

from tutor.cjk import HAN as _CJK
from tutor.cjk import HAN_RE, has_han

CJK_RE = HAN_RE
has_cjk = has_han

_TOKEN_RE = re.compile(
    rf"(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(?P<num>\d+(?:\.\d+)?)"
    rf"|(?P<cjk>[{_CJK}]+)"
)

EN_STOPWORDS = frozenset(
    """a an the is are was were be been being am do does did doing have has had having i me my
    we our you your he she it its they them their this that these those what which who whom how
    why when where there here of to in on at by for with from as into about than then so if or
    and but not can could should would will shall may might must just also very too only own
    same such some any all each both few more most other no nor up down out off over under again
    further once get got getting use using used want wanted need needs know tell please thanks
    thank hi hello help explain mean means meaning happen happens happened work works working
    make makes made way thing things something anything does doesn't dont don't isn't why's
    what's whats it's im i'm ok okay really still even like one two""".split()  # noqa: SIM905
)
"""Function words and filler; "no" is kept out of identifiers because ``no_grad`` is joined
before stop words are dropped."""

ZH_STOP_BIGRAMS = frozenset(
    """什么 为什 怎么 么我 我的 一个 这个 那个 如何 可以 是什 么是 么会 么用 么要
    请问 你好 谢谢 我们 他们 的时 时候 一下 是不 不是 有没 没有 么办 怎样
    能不 不能 了吗 的是 是的 这是 么意 意思""".split()  # noqa: SIM905
)
"""Question filler bigrams that match everywhere and mean nothing."""

_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer: enough to meet "gradients"/"gradient", "computed"/"compute"."""
    if len(word) <= 4 or "_" in word:
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)] + replacement
            if suffix == "es" and not base.endswith(("ss", "sh", "ch", "x")):
                return word[:-1]
            return base
    return word


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, *, joinable: Iterable[str] = ()) -> list[str]:
    """Index/query tokens of ``text``.

    ``joinable`` names underscore identifiers (``no_grad``, ``retain_graph``) that a learner may
    type with a space ("no grad"): adjacent words that form one are also emitted joined.
    """
    join_set = set(joinable)
    tokens: list[str] = []
    words: list[str] = []  # plain English words in order, for joining
    for match in _TOKEN_RE.finditer(text):
        if match.group("cjk"):
            words.append("")
            tokens.extend(b for b in cjk_bigrams(match.group("cjk")) if b not in ZH_STOP_BIGRAMS)
            continue
        if match.group("num"):
            words.append("")
            continue
        ident = match.group("ident").lower()
        if "." in ident or "_" in ident:
            words.append("")
            tokens.extend(_identifier_tokens(ident))
            continue
        words.append(ident)
        if ident not in EN_STOPWORDS and len(ident) > 1:  # x, y, z: a variable, not a topic
            tokens.append(stem(ident))
    if join_set:
        for left, right in itertools.pairwise(words):
            if left and right and f"{left}_{right}" in join_set:
                tokens.append(f"{left}_{right}")
    return tokens


def _identifier_tokens(ident: str) -> list[str]:
    parts = [p for p in ident.split(".") if p]
    out: list[str] = []
    if len(parts) > 1:
        out.append(".".join(parts[-2:]) if parts[0] == "torch" else "." + parts[-1])
    for part in parts:
        if len(part) == 1 and len(parts) > 1:
            continue  # the learner's variable name (x in x.grad) says nothing about the topic
        out.append(part)
        if "_" in part.strip("_"):
            out.extend(stem(p) for p in part.strip("_").split("_") if p and p not in EN_STOPWORDS)
    return out


def identifiers(text: str) -> list[str]:
    """Dotted/underscore identifiers as written, e.g. ``['x.grad', 'retain_graph']``."""
    return [m.group("ident") for m in _TOKEN_RE.finditer(text) if m.group("ident")]
