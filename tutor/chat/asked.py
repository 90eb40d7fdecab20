"""The asked point: what a question asks beyond its topic and its kind.

A question's kind (kinds.yaml) decides the shape of its answer; the asked point decides what
the answer's first sentence is about. It is read from the sentences that ask — not from the
story or the code around them — and holds

- the API and code names those sentences name (``model.eval()``, ``zero_grad``, the
  learner's ``self.L2_Y``), normalised to the last part of the name (``eval``, ``zero_grad``,
  ``l2_y``), and the names the whole question names;
- for a comparison, its two sides as written ("difference between step() and backward()"),
  with the names and words of each;
- the other things it asks: a "what does this print?" that also asks "why?" or "is that
  right?" has those sentences too, answered after the run's output.

The card book ranks cards by how much of the asked point they cover (a card about clipping
does not answer "does the placement of zero_grad matter?" because it shares "placement"),
and an answer's yes or no is given only by a card about what the question names
(:mod:`tutor.chat.cards`). Patterns are data: ``sides`` and ``plain_names`` in kinds.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tutor.chat.cards import Kind, canonical, kinds_data, question_kind
from tutor.chat.tokens import tokenize

_NAME_RE = re.compile(r"(?<![\w.])\.?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(\()?")
_CODE_SPAN_RE = re.compile(r"`([^`]+)`")


@lru_cache(maxsize=1)
def _plain_names() -> frozenset[str]:
    return frozenset(str(n).lower() for n in kinds_data()["plain_names"])


@lru_cache(maxsize=1)
def _error_asks() -> re.Pattern[str]:
    return re.compile("|".join(kinds_data()["asks_error"]), re.IGNORECASE)


def asks_if_it_errors(text: str) -> bool:
    """Whether ``text`` asks whether code raises ("真的会报错吗？", "will this throw?"): a
    question the code's own run answers yes or no."""
    return _error_asks().search(text) is not None


@lru_cache(maxsize=1)
def _side_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in kinds_data()["sides"])


def normal_name(name: str) -> str:
    """``optimizer.zero_grad()`` -> ``zero_grad``; ``requires_grad_`` -> ``requires_grad``."""
    last = name.rstrip("()").rsplit(".", 1)[-1].lower()
    return last.rstrip("_") or last


@lru_cache(maxsize=4096)
def api_names(text: str) -> frozenset[str]:
    """The API and code names ``text`` names: dotted names, calls, names with an underscore
    and anything in backticks, normalised (:func:`normal_name`); Python's and torch's plain
    names (``print``, ``torch.tensor``, ``self``) are left out: they name no topic."""
    found: set[str] = set()
    spans = _CODE_SPAN_RE.findall(text)
    for piece in (text, *spans):
        for match in _NAME_RE.finditer(piece):
            name, call = match.group(1), match.group(2)
            dotted = "." in name or match.group(0).startswith(".")
            whole = piece in spans and match.group(0) == piece.strip()
            if not (dotted or call or "_" in name.strip("_") or whole):
                continue
            for part in _parts(name, dotted):
                if len(part) > 1 and part not in _plain_names():
                    found.add(part)
    return frozenset(found)


def _parts(name: str, dotted: bool) -> list[str]:
    """The names a written name stands for: its last part (``model.eval`` -> ``eval``) and,
    for an attribute chain of the learner's (``self.L2_Y.grad``), the part before the
    attribute asked about."""
    parts = [normal_name(name)]
    pieces = name.split(".")
    if dotted and len(pieces) > 2:
        parts.append(normal_name(pieces[-2]))
    return parts


@dataclass(frozen=True)
class Side:
    text: str
    names: frozenset[str]
    words: frozenset[str]


@dataclass(frozen=True)
class AskedPoint:
    kind: Kind
    asking: str
    """The sentences that ask, without the code (the whole prose when every sentence asks)."""
    names: frozenset[str]
    """API and code names the asking sentences name."""
    named: frozenset[str]
    """API and code names the whole question names (its story and code too)."""
    sides: tuple[Side, Side] | None = None
    """The two things a comparison compares, when the question names them."""
    choice: bool = False
    """The asking sentences offer alternatives ("..., or ...?"): no yes or no answers them."""
    said: str = ""
    """All of the question's prose: what the asking sentences mean when they say little
    themselves ("Can you explain this to me?")."""

    @property
    def about_names(self) -> frozenset[str]:
        """What the answer must be about: the asking sentences' names, else the question's."""
        return self.names or self.named


def _side(text: str) -> Side:
    text = text.strip(" \t\n,.;:?？。，'\"“”")
    words = frozenset(t for t in tokenize(canonical(text)) if not t.startswith("."))
    return Side(text, api_names(text), words)


def _named_side(name: str) -> Side:
    return Side(name, frozenset({name}), frozenset({name}))


def compared_sides(sentence: str) -> tuple[Side, Side] | None:
    """The two sides a comparison names ("difference between A and B", "A vs B", "A 和 B 的
    区别"), or None when it names none that can be told apart."""
    for pattern in _side_patterns():
        found = pattern.search(sentence)
        if found is None:
            continue
        a, b = _side(found.group("a")), _side(found.group("b"))
        if (a.names or a.words) and (b.names or b.words) and (a.names, a.words) != (
            b.names,
            b.words,
        ):
            return a, b
    return None


_SENTENCE_RE = re.compile(r"(?<=[?!。？！])\s*|(?<=\.)\s+|\n+")


def sentences(question: str) -> list[str]:
    """The sentences of ``question``'s prose, in order: its fenced blocks and whole lines of
    code left out, what it names inside a sentence (``step()``, ``x.grad``) kept."""
    # snippets reads the card book's kinds
    from tutor.chat.snippets import code_line, outside_fences

    text = "\n".join(line for line in outside_fences(question).splitlines()
                     if not code_line(line.rstrip()))
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def asking(question: str) -> list[str]:
    """The sentences of ``question`` that ask: those with a question mark, else those whose
    words ask (a kind's pattern), else all of them."""
    said = sentences(question)
    marked = [i for i, s in enumerate(said) if s.endswith(("?", "？"))]
    if marked:
        # a bare "Why?" asks about the sentence before it
        return [
            f"{said[i - 1]} {said[i]}" if i and len(tokenize(canonical(said[i]))) < 2 else said[i]
            for i in marked
        ]
    worded = [s for s in said if question_kind(s) != "what" or _WHAT_RE.search(s)]
    return worded or said


_WHAT_RE = re.compile(r"\bwhat\b|是什么|什么是|什么意思", re.IGNORECASE)
_CLAUSE_RE = re.compile(
    r",?\s+and\s+(?=(?:is|are|was|were|does|do|did|why|how|what|can|should|will|would|"
    r"where|which)\b)|,\s*(?=(?:is|are|does|do|did|why|how|can|should)\b)|[，；;]",
    re.IGNORECASE,
)


def _without_value(sentence: str) -> list[str]:
    """``sentence`` without its "what does this print?" clause ("What does this print with
    .data, and is the result right?" -> ["is the result right?"])."""
    if question_kind(sentence) != "value":
        return [sentence]
    clauses = [c.strip() for c in _CLAUSE_RE.split(sentence) if c and c.strip()]
    return [c for c in clauses[1:] if question_kind(c) != "value" and len(c.split()) > 1]


def other_asks(question: str) -> tuple[str, str]:
    """(what ``question`` asks besides what its code prints, that with the sentences around
    it): the asking sentences and clauses that are not "what does this print?", and the
    question's prose without those; ("", "") when it asks nothing else."""
    asks = [c for sentence in asking(question) for c in _without_value(sentence)]
    if not asks:
        return "", ""
    context = [c for sentence in sentences(question) for c in _without_value(sentence)]
    return " ".join(asks), " ".join(context)


_OR_RE = re.compile(r"\bor\b|还是|或者|或是", re.IGNORECASE)
_CHOICE_RE = re.compile(
    r"\bor\s+(?:in\s+|on\s+|for\s+|with\s+)?(?:neither|none|not|both|either)\b|\bor\s+(?:do|should|must)\s+(?:i|we)\s+still\b"
    r"|(?:或者|还是|或是)(?:都|全)?(?:不|没)",
    re.IGNORECASE,
)


def offers_choice(text: str) -> bool:
    """Whether ``text`` asks which of two opposite things holds ("can both use detach(), or
    neither?", "两处都用 detach()，或者都不用？", "does eval() do it, or do I still need
    no_grad()?"): a yes or no does not answer it. "Is it fine, or is it unfair?" still asks
    whether it is fine."""
    return _CHOICE_RE.search(text) is not None


def _either_or(asks: list[str]) -> tuple[Side, Side] | None:
    """The two sides of a sentence that asks about one thing or another ("Does model.eval()
    turn off gradients, or do I still need torch.no_grad()?"): exactly two names, with an
    "or" between them. A yes or no about one of them is answered by what tells them apart."""
    # one sentence, else the asking sentences together ("What does model.eval() do? Does it
    # turn off gradients, or do I still need torch.no_grad()?")
    for sentence in [*asks, " ".join(asks)] if len(asks) > 1 else asks:
        names = api_names(sentence)
        if len(names) != 2:
            continue
        lowered = sentence.lower()
        a, b = sorted(names, key=lowered.find)
        start, end = lowered.find(a), lowered.rfind(b)
        if 0 <= start < end and _OR_RE.search(lowered[start:end]):
            return _named_side(a), _named_side(b)
    return None


@lru_cache(maxsize=256)
def asked_point(question: str) -> AskedPoint:
    """The asked point of ``question`` (one question is matched several times: whole, by
    parts, from the shell's quick path and the Tutor's)."""
    asks = asking(question)
    text = " ".join(asks)
    kind = question_kind(question)
    names = api_names(text)
    sides = None
    if kind == "compare":
        sides = next((found for s in asks if (found := compared_sides(s))), None)
        if (sides is None or not (sides[0].names or sides[1].names)) and len(names) == 2:
            # "tensor.detach() 和 tensor.data ... 有什么区别": the two names are the sides
            a, b = sorted(names, key=text.lower().find)
            sides = (_named_side(a), _named_side(b))
    else:
        # "should I use A or B?" names its sides like a comparison does, whatever else the
        # sentence names (the learner's own variables)
        sides = next((found for s in asks if (found := compared_sides(s))
                      and found[0].names and found[1].names), None) or _either_or(asks)
    return AskedPoint(
        kind=kind,
        asking=text,
        said=" ".join(sentences(question)),
        choice=offers_choice(text),
        names=names,
        named=api_names(question),
        sides=sides,
    )
