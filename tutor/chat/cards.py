"""Answer cards: questions learners really ask, answered in the shape the question asks for.

The cards are data: ``cards/*.yaml``, one file a part of the course. A card has

- ``id`` (unique; ``err-...`` for a card that answers an error, see :attr:`Card.error`) and
  ``read``: the LESSON/STEP the answer sends the learner to (``also``: a
  second step that teaches the way around; ``read_if``: another step when the question
  matches a regular expression);
- ``forms``: how learners ask it, a few per language (matched by words);
- ``signals``: exact phrases that identify the card by themselves (an error message, an API
  call), case-insensitive substrings of the question;
- ``answer`` (en, zh): the short answer; ``{t}`` is the learner's tensor (whose ``.grad`` they
  ask about) and ``{out}`` the tensor they call ``backward()`` on, filled with the learner's
  own names or a plain noun, so an answer never names a variable the learner does not have;
- ``verdict`` (yes | no | depends): the first word for "can I" / "is it safe" questions;
  ``sides``: each side of "A vs B"; ``fix`` (en, zh): what to change, for "my code fails";
- ``example``: code that runs as it is on torch 2.13; a ``print(...)  # OUTPUT`` comment claims
  what that line prints (``...`` stands for anything) and the tests check every claim;
- ``sources``: where the question is asked and the facts stand: public threads and docs
  (URLs) and the course (``course:LESSON/STEP``);
- ``unless``: a regular expression for the situations its answer is false in (the card
  does not answer a question it matches).

A question is matched to a card by the card's signals and by how much of one of its question
forms the question covers; its kind (``kinds.yaml``: what / why / how / compare / can / safe /
value / fails) decides the answer's shape: a comparison gives both sides, "can I" and "is it
safe" start with yes or no, an error gives its cause and then the fix.

Plain dataclasses and the stdlib only: ``tutor ask`` answers from here without importing
pydantic or building the retrieval index; the tests validate the cards against these
dataclasses with pydantic.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tutor.chat.bilingual import NONE, Both, Pair, Patterns
from tutor.chat.tokens import has_cjk, tokenize

if TYPE_CHECKING:
    from tutor.chat.asked import AskedPoint
    from tutor.chat.asked import Side as AskedSide
    from tutor.chat.code_facts import CodeFact

DATA = Path(__file__).with_name("cards")
"""One YAML file of cards a part of the course (``cards/NN-topic.yaml``), read in name order."""
KINDS = Path(__file__).with_name("kinds.yaml")

Kind = Literal["what", "why", "how", "compare", "can", "safe", "value", "fails"]
Verdict = Literal["yes", "no", "depends"]
MIN_SCORE = 0.55
"""Below this a card does not answer: the question goes to the retrieval over the course."""
SURE_SCORE = 0.7
FORM_GATE_SCORE = 0.6
"""How nearly a question with no PyTorch word must ask a card's form to be about PyTorch."""
"""Below this (and with no signal) a card answers only when the retrieval over the course
agrees on its lesson: a few shared words ("tensor", "shape") are not understanding."""
WORDED_SCORE = 0.85
"""A question form this close asks the question nearly word for word."""
SIGNAL_SCORE = 2.0
"""A signal this strong (a quoted error message) answers by itself."""
PASTED_SIGNAL_SHARE = 0.5
"""A signal found only in the statements a question pastes counts this share."""
FOCUS_SHARE = 0.5
"""The share of a card's score that comes from the sentences that ask (the rest from the whole
question): "How do I compute the Jacobian efficiently?" after a pasted loop of
``torch.autograd.grad`` calls asks about Jacobians, not about autograd.grad."""
CODE_FACT_SHARE = 0.6
"""Added to a card that names a fact the learner's code shows (``netD(fake.detach())`` in
the code, a question about detach): the code says which of the cards near it is meant."""
NAME_SHARE = 0.5
"""Added to a card for the share of the asked sentences' API names it is about and speaks of."""
ASKS_ENOUGH = 3
"""Fewer words than this in the asking sentences say nothing by themselves."""
PARTIAL_COVER = 0.05
"""Below this share of the asking sentences' words a card (not found by a signal) speaks of,
its answer is the nearest thing known, said as such (see Match.partial)."""
COMMON_NAME_SHARE = 0.2
"""A name more than this share of the cards speak of (``backward``) tells none of them apart."""
NAMES_ENOUGH = 4.0
"""The weight of asked names (log inverse card frequency) that a card must cover for the whole
of NAME_SHARE: one name that one card in twenty speaks of (``zero_grad``) weighs about 3."""
FORM_SMOOTHING = 2.5
"""Added to a form's weight: a form of one or two common words ("what is a gradient") is not
covered by a question that merely says "grad"."""


@dataclass(frozen=True)
class Side:
    name: str
    en: str
    zh: str
    name_zh: str | None = None
    """The name in a Chinese answer, where the name is words, not code."""
    asked: str | None = None
    """How questions name this side, when the name shown is words (``(loss1 +
    loss2).backward()`` for "one backward() of the sum"): what matching reads."""

    def name_in(self, lang: str) -> str:
        return (self.name_zh or self.name) if lang == "zh" else self.name

    @property
    def matched(self) -> str:
        """The name a question is matched against."""
        return self.asked or self.name


@dataclass(frozen=True)
class ReadIf:
    when: str
    """A regular expression the question matches."""
    read: str


@dataclass(frozen=True)
class CodeFactUse:
    """A fact of the learner's code that bears on a card's question (code_facts.py): when
    the code shows it, the answer says so first, and a yes/no question gets ``verdict``."""

    fact: str
    verdict: Verdict | None = None


@dataclass(frozen=True)
class Card:
    """One question learners ask, and its answer."""

    id: str
    read: str
    """LESSON/STEP to read."""
    answer: Pair
    forms: Patterns = NONE
    signals: tuple[str, ...] = ()
    verdict: Verdict | None = None
    sides: tuple[Side, ...] = ()
    fix: Pair | None = None
    example: str | None = None
    read_if: tuple[ReadIf, ...] = ()
    """Another step to read when the question describes that situation."""
    also: str | None = None
    """A second LESSON/STEP that teaches the way around (named after the one to read)."""
    sources: tuple[str, ...] = ()
    """Where the question is asked and the facts stand: public threads and docs (URLs) and
    the course (``course:LESSON/STEP``)."""
    unless: str | None = None
    """A regular expression for the situations the answer is false in (a tensor's
    ``.cuda()`` copy is not a leaf; a module's ``.cuda()`` moves its parameters in place):
    a question it matches is not answered by this card."""
    condition: Pair | None = None
    """When the verdict holds and when it does not ("Safe when no later backward() ...;
    needed when ..."), said right after the yes or no; worded without a yes or no of its
    own, since a question form may carry the opposite verdict."""
    why: Pair | None = None
    """The cause: what a "why" question gets first."""
    steps: tuple[Pair, ...] = ()
    """How to do it, in order: what a "how do I" question gets first."""
    pitfall: Pair | None = None
    """The mistake people make here, said last."""
    code_facts: tuple[CodeFactUse, ...] = ()
    """The facts of the learner's code that bear on the question (said first when shown)."""

    @property
    def error(self) -> bool:
        """The card answers an error (its message, what raises it): its id says so, ``err-``.
        A snippet that ran without one contradicts it."""
        return self.id.startswith("err-")

    def read_for(self, question: str) -> str:
        """The step to read for ``question``: the first ``read_if`` it matches, else read."""
        for alternative in self.read_if:
            if re.search(alternative.when, question, re.IGNORECASE):
                return alternative.read
        return self.read


@dataclass(frozen=True)
class CardSet:
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Match:
    card: Card
    score: float
    kind: Kind
    by_signal: bool
    read: str
    """The step to read for this question (the card's read, or a read_if's)."""
    verdict: Verdict | None = None
    """Yes or no for this question: the verdict of the question form it matched (a form may
    end with ``=> yes``), else the card's."""
    more: tuple[Match, ...] = ()
    """The matches of the question's later parts ("Why X? And should I also Y?"), answered
    after this one, in order, each in its own short paragraph."""
    covered: float = 1.0
    """How much of what the asking sentences say the card speaks of (:meth:`CardBook.coverage`):
    a card that speaks of none of it is the nearest thing known, not an answer."""

    @property
    def partial(self) -> bool:
        """Whether the card speaks of nothing the question asks: the answer then says it is
        the nearest thing known, and gives no yes or no."""
        return not self.by_signal and self.covered < PARTIAL_COVER

    @property
    def sure(self) -> bool:
        """Whether the match stands on its own (a signal, or most of a form covered)."""
        return self.by_signal or self.score >= SURE_SCORE

    @property
    def lessons(self) -> frozenset[str]:
        """The lessons the answer would name (its step's and its see-also's)."""
        refs = [self.read, self.card.read, *([self.card.also] if self.card.also else [])]
        return frozenset(ref.partition("/")[0] for ref in refs)


@dataclass(frozen=True)
class Names:
    """The learner's own names an answer may use."""

    grad_of: str | None = None
    backward_of: str | None = None
    all: frozenset[str] = field(default_factory=frozenset)
    roles: tuple[tuple[str, str], ...] = ()
    """(role, the learner's name): their optimizer, model, loss (roles.yaml)."""


def _pair(raw: dict[str, str]) -> Pair:
    return Pair(en=str(raw["en"]).strip(), zh=str(raw["zh"]).strip())


_FORM_VERDICT_RE = re.compile(r"\s*=>\s*(yes|no|depends)\s*$")
"""A question form's own answer, for a yes/no question: "is X the reason for Y => yes"."""


def form_verdict(form: str) -> tuple[str, Verdict | None]:
    """(the form's words, its verdict if it ends with ``=> yes|no|depends``)."""
    found = _FORM_VERDICT_RE.search(form)
    if found is None:
        return form, None
    return form[: found.start()], found.group(1)  # type: ignore[return-value]


def _side(raw: dict[str, Any]) -> Side:
    """A side of a comparison; ``name_zh`` names it in Chinese where its name is words,
    ``asked`` as questions name it where the name shown is words."""
    return Side(raw["name"], raw["en"].strip(), raw["zh"].strip(), raw.get("name_zh"),
                raw.get("asked"))


def _card(raw: dict[str, Any]) -> Card:
    forms = raw.get("forms") or {}
    return Card(
        id=raw["id"],
        read=raw["read"],
        answer=_pair(raw["answer"]),
        forms=Both(
            en=tuple(form_verdict(str(f))[0] for f in forms.get("en", ())),
            zh=tuple(form_verdict(str(f))[0] for f in forms.get("zh", ())),
        ),
        signals=tuple(s.lower() for s in raw.get("signals", ())),
        verdict=raw.get("verdict"),
        sides=tuple(_side(s) for s in raw.get("sides", ())),
        fix=_pair(raw["fix"]) if raw.get("fix") else None,
        example=raw["example"].rstrip() if raw.get("example") else None,
        read_if=tuple(ReadIf(r["when"], r["read"]) for r in raw.get("read_if", ())),
        also=raw.get("also"),
        sources=tuple(raw.get("sources", ())),
        unless=raw.get("unless"),
        condition=_pair(raw["condition"]) if raw.get("condition") else None,
        why=_pair(raw["why"]) if raw.get("why") else None,
        steps=tuple(_pair(step) for step in raw.get("steps", ())),
        pitfall=_pair(raw["pitfall"]) if raw.get("pitfall") else None,
        code_facts=tuple(
            CodeFactUse(use["fact"], use.get("verdict")) for use in raw.get("code_facts", ())
        ),
    )


def load_raw(path: Path = DATA) -> dict[str, Any]:
    """The cards of every file in the folder ``path`` (or of the one file ``path``)."""
    from tutor.yaml_read import read_yaml

    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    return {"cards": [card for file in files for card in read_yaml(file)["cards"]]}


@lru_cache(maxsize=4)
def load_cards(path: Path = DATA) -> CardSet:
    raw = book_data()["cards"] if path == DATA else load_raw(path)["cards"]
    return CardSet(cards=tuple(_card(c) for c in raw))


def _book_sources() -> list[Path]:
    """What the card book is made of: the cards, kinds.yaml, and the code that reads them."""
    here = Path(__file__).parent
    code = [Path(__file__), here / "tokens.py", here / "bilingual.py", here / "asked.py"]
    return [*sorted(DATA.glob("*.yaml")), KINDS, *code]


@lru_cache(maxsize=1)
def book_data() -> dict[str, Any]:
    """The cards and kinds.yaml as parsed, with every question form's tokens and their idf:
    what matching needs, kept as JSON under the cache dir and keyed by the sha256 of its
    sources, so that `tutor ask` neither parses the YAML nor tokenises the forms again."""
    import hashlib
    import json

    from tutor.paths import cache_root, write_cache_file
    from tutor.yaml_read import read_yaml

    digest = hashlib.sha256()
    for source in _book_sources():
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    entry = cache_root() / "chat" / f"cards-{digest.hexdigest()}.json"
    try:
        cached: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
        return cached
    except (OSError, ValueError):
        pass
    data: dict[str, Any] = {"cards": load_raw()["cards"], "kinds": read_yaml(KINDS)}
    _book_data_kinds.update(data["kinds"])  # canonical() below reads kinds.yaml's words
    forms: list[tuple[int, list[str], str | None]] = []
    df: Counter[str] = Counter()
    for i, card in enumerate(data["cards"]):
        asked = card.get("forms") or {}
        for form in (*asked.get("en", ()), *asked.get("zh", ())):
            words, verdict = form_verdict(str(form))
            tokens = sorted(set(tokenize(canonical(words))))
            if tokens:
                forms.append((i, tokens, verdict))
                df.update(tokens)
    n = max(len(forms), 1)
    data["forms"] = forms
    data["idf"] = {t: math.log(1 + n / c) for t, c in df.items()}
    built = [_card(raw) for raw in data["cards"]]
    data["names"] = [[sorted(names) for names in card_names(card)] for card in built]
    data["said"] = [sorted(card_said(card)) for card in built]
    write_cache_file(entry, json.dumps(data, ensure_ascii=False))
    return data


def card_said(card: Card) -> frozenset[str]:
    """The tokens of everything ``card`` says (question forms, answer, facets), in both
    languages: what :meth:`CardBook.coverage` compares the asking sentences with."""
    pairs = [card.answer, *(p for p in (card.why, card.condition, card.fix) if p)]
    pairs += [*card.steps, *((card.pitfall,) if card.pitfall else ())]
    text = " ".join(
        [*card.forms.en, *card.forms.zh, *(f"{p.en} {p.zh}" for p in pairs)]
        + [f"{s.matched} {s.en} {s.zh}" for s in card.sides]
    )
    return frozenset(tokenize(canonical(text)))


def card_names(card: Card) -> tuple[frozenset[str], frozenset[str]]:
    """(the API names ``card``'s question forms, signals and sides name: what it is about;
    those and the names its answer and facets mention)."""
    from tutor.chat.asked import api_names  # asked.py reads this module's kinds

    about = api_names(
        " ".join((*card.forms.en, *card.forms.zh, *card.signals, *(s.matched for s in card.sides)))
    )
    said = [card.answer.en, *(p.en for p in (card.why, card.condition, card.fix) if p)]
    said += [s.en for s in card.sides] + [step.en for step in card.steps]
    return about, about | api_names(" ".join(said))


_book_data_kinds: dict[str, Any] = {}
"""kinds.yaml while the book is being built (before book_data() returns it)."""


def kinds_data() -> dict[str, Any]:
    """kinds.yaml as parsed (from the book's cache)."""
    kinds: dict[str, Any] = _book_data_kinds or book_data()["kinds"]
    return kinds


_kinds = kinds_data


@lru_cache(maxsize=1)
def _kind_patterns() -> tuple[tuple[Kind, re.Pattern[str]], ...]:

    out = []
    for entry in _kinds()["kinds"]:
        out.append((entry["kind"], re.compile("|".join(entry["patterns"]), re.IGNORECASE)))
    return tuple(out)


_CODE_SPAN_RE = re.compile(r"`[^`]*`|```.*?```", re.DOTALL)
_QUOTED_ERROR_RE = re.compile(
    r"(RuntimeError|ValueError|TypeError|AttributeError|UserWarning|Error)\s*:|"
    r"(does not require grad|can be implicitly created|has been modified by an inplace|"
    r"backward through the graph|in-place operation|same device|can't call numpy)",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _anchors() -> tuple[str, ...]:

    return tuple(a.lower() for a in _kinds()["anchors"])


@lru_cache(maxsize=1)
def _discourse() -> frozenset[str]:
    """The tokens of kinds.yaml's discourse words (talk about a question, not its subject)."""
    return frozenset(t for w in kinds_data()["discourse_words"] for t in tokenize(str(w)))


def about_pytorch(question: str) -> bool:
    """Whether ``question`` names anything of PyTorch or autograd (kinds.yaml's anchors)."""
    lowered = question.lower()
    return any(anchor in lowered for anchor in _anchors())


@lru_cache(maxsize=1)
def _words() -> tuple[re.Pattern[str], dict[str, str]]:

    table = {str(k).lower(): str(v) for k, v in _kinds()["words"].items()}
    # longest first, so "back propagation" is replaced before "propagation" could be
    ordered = sorted(table, key=len, reverse=True)
    parts = [re.escape(w) if has_cjk(w) else rf"(?<![\w.]){re.escape(w)}(?![\w(])" for w in ordered]
    return re.compile("|".join(parts), re.IGNORECASE), table


def canonical(text: str) -> str:
    """``text`` with each variant of kinds.yaml's ``words`` written the one way."""
    pattern, table = _words()
    return pattern.sub(lambda m: table[m.group(0).lower()], text)


_DOTTED_RE = re.compile(r"(?<![\w.])[a-z_]\w*\.[a-z_]\w*\b(?!\s*\()")
"""An attribute named in words (``output.grad``), not a call of pasted code."""
_PASTED_RE = re.compile(r"^\s*[A-Za-z_][\w.\[\]]*\s*(=|\+=|-=)[^=]|^\s*print\(|^\s*import ")


_PROSE_WORD_RE = re.compile(r" +([A-Za-z]{2,}|[\u4e00-\u9fff])(?![\w(.\[=])")


def _statement_end(part: str) -> int:
    """Where the pasted statement at the start of ``part`` ends: at the first word of prose
    outside brackets (``print(a.grad) gives ...`` ends before "gives"), else at its end."""
    depth = 0
    for i, ch in enumerate(part):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch == " " and i and (part[i - 1].isalnum() or part[i - 1] in ")]'\""):
            if _PROSE_WORD_RE.match(part, i):
                return i
        elif depth == 0 and "\u4e00" <= ch <= "\u9fff":
            return i
    return len(part)


def _without_statements(question: str) -> str:
    """``question`` without the statements it pastes (``x = ...; y.backward()``): the words
    around them say what is asked."""
    kept = []
    for part in re.split(r";|\n", question):
        kept.append(part[_statement_end(part):] if _PASTED_RE.match(part) else part)
    return " ".join(kept)


_SENTENCE_RE = re.compile(r"(?<=[?!。？！])|(?<=\.)\s+|\n+")


def asking_sentences(question: str) -> str:
    """The sentences of ``question``'s prose that ask (a question mark, else a question's
    kind), without its pasted code; empty when they are the whole question."""
    from tutor.chat.snippets import prose  # snippets reads this module's kinds

    said = [p for s in _SENTENCE_RE.split(question) if s and (p := prose(s).strip())]
    asking = [s for s in said if s.endswith(("?", "？"))]
    if not asking:
        asking = [s for s in said if any(p.search(s) for k, p in _kind_patterns() if k != "fails")]
    focus = " ".join(asking)
    return "" if focus == " ".join(said) else focus


_PART_END_RE = re.compile(r"(?<=[?？])\s*")


def question_parts(question: str) -> list[str]:
    """``question`` cut after each sentence that asks (ends with a question mark): each part
    keeps the statements before it since the previous ask, so "Why is that done? We do not
    divide the loss. Is it necessary to divide it?" is two parts. Text after the last ask
    stays with it; a question with one ask is one part."""
    pieces = [p for p in _PART_END_RE.split(question.strip()) if p.strip()]
    parts: list[str] = []
    for piece in pieces:
        if parts and not parts[-1].rstrip().endswith(("?", "？")):
            parts[-1] += " " + piece
        else:
            parts.append(piece)
    if len(parts) > 1 and not parts[-1].rstrip().endswith(("?", "？")):
        last = parts.pop()
        parts[-1] += " " + last
    return parts


def _asks_enough(part: str) -> bool:
    """Whether the sentence that asks in ``part`` says enough to be understood alone (three
    words an index knows, not "Why is that done so?")."""
    from tutor.chat.snippets import prose  # snippets reads this module's kinds

    said = [s for s in _SENTENCE_RE.split(part) if s.strip()]
    asking = prose(said[-1] if said else part)
    return len(set(tokenize(canonical(asking)))) >= 3


_EXCEPTION_LINE_RE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):\s+\S",
                                re.MULTILINE)
"""A line that starts with an exception and its message, as a traceback ends."""


def question_kind(question: str) -> Kind:
    """The kind of ``question``: the first kind in kinds.yaml whose patterns match. A question
    that pastes an exception line is read by its sentences that ask (a question mark): its
    story around the error ("I defined it the same as the docs") asks nothing; with no such
    sentence, its story is no comparison."""
    text = _CODE_SPAN_RE.sub(" ", question)
    pasted_error = _EXCEPTION_LINE_RE.search(question) is not None
    if pasted_error:
        from tutor.chat.snippets import prose  # snippets reads this module's kinds

        asked = " ".join(p for s in _SENTENCE_RE.split(question)
                         if (p := prose(s).strip()).endswith(("?", "？")))
        text = asked or text
    for kind, pattern in _kind_patterns():
        if kind == "fails" or (kind == "compare" and pasted_error and not asked):
            continue
        if pattern.search(text):
            return kind
    return (
        "fails"
        if _QUOTED_ERROR_RE.search(question) or _kind_patterns()[-1][1].search(text)
        else "what"
    )


@lru_cache(maxsize=1)
def _output_pattern() -> re.Pattern[str]:
    return re.compile("|".join(_kinds()["output"]), re.IGNORECASE)


def mentions_output(text: str) -> bool:
    """Whether ``text`` (a question's prose) speaks of what code printed or returned."""
    return _output_pattern().search(_CODE_SPAN_RE.sub(" ", text)) is not None


_GRAD_OF_RE = re.compile(
    r"((?:[A-Za-z_]\w*)(?:\[[^\]\n]{1,20}\])?(?:\.[A-Za-z_]\w*)*?)\.grad\b(?!_)"
)
_BACKWARD_OF_RE = re.compile(r"((?:[A-Za-z_]\w*)(?:\[[^\]\n]{1,20}\])?)\.backward\(")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_LEAF_MADE_RE = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*)\s*=\s*(?:torch\.)?\w+\([^\n]*requires_grad\s*=\s*True"
)
"""A leaf the learner makes (``x = torch.tensor(..., requires_grad=True)``): the tensor an
answer speaks of when they read no ``.grad``."""
_NOT_NAMES = frozenset({"torch", "nn", "self", "np", "F", "optim", "optimizer", "model"})


def learner_names(question: str, code: str = "", error_line: str = "") -> Names:
    """The names in the learner's question, code and last error that an answer may use."""
    text = "\n".join(part for part in (question, error_line, code) if part)
    grad_of = next(
        (m for m in _GRAD_OF_RE.findall(text) if m.split(".")[0] not in _NOT_NAMES), None
    ) or next((m for m in _LEAF_MADE_RE.findall(text) if m not in _NOT_NAMES), None)
    backward_of = next(
        (m for m in _BACKWARD_OF_RE.findall(text) if m not in _NOT_NAMES and m != "autograd"),
        None,
    )
    from tutor.chat.roles import find_roles

    return Names(grad_of=grad_of, backward_of=backward_of, all=frozenset(_IDENT_RE.findall(text)),
                 roles=find_roles(text))


@lru_cache(maxsize=1)
def bundled_book() -> CardBook:
    """The bundled cards' book, built once a process: its indexes (the forms of each token,
    each form's weight) take ~30 ms to compute and never change."""
    return CardBook()


class CardBook:
    """Matches questions to cards."""

    def __init__(self, cards: CardSet | None = None):
        self._forms: list[tuple[Card, frozenset[str], Verdict | None]] = []
        self._cached_names: list[list[list[str]]] | None = None
        self._cached_said: list[list[str]] | None = None
        if cards is None:  # the bundled cards: their forms' tokens are in the book's cache
            self.cards = load_cards().cards
            data = book_data()
            self._cached_names, self._cached_said = data["names"], data["said"]
            self._forms = [
                (self.cards[i], frozenset(tokens), verdict)
                for i, tokens, verdict in data["forms"]
            ]
            self._idf: dict[str, float] = data["idf"]
            return
        self.cards = cards.cards
        df: Counter[str] = Counter()
        for card in self.cards:
            for form in (*card.forms.en, *card.forms.zh):
                tokens = frozenset(tokenize(canonical(form)))
                if tokens:
                    self._forms.append((card, tokens, None))
                    df.update(tokens)
        n = max(len(self._forms), 1)
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}

    @cached_property
    def _unknown(self) -> float:
        """The weight of a word no form has."""
        return math.log(1 + len(self._forms))

    @cached_property
    def _by_token(self) -> dict[str, list[int]]:
        """token -> the forms that have it: a question is compared with those forms only."""
        index: dict[str, list[int]] = {}
        for i, (_, tokens, _) in enumerate(self._forms):
            for token in tokens:
                index.setdefault(token, []).append(i)
        return index

    @cached_property
    def _form_weights(self) -> list[float]:
        return [self._weight(tokens) for _, tokens, _ in self._forms]

    def _weight(self, tokens: frozenset[str]) -> float:
        unknown = self._unknown
        return sum(self._idf.get(t, unknown) for t in tokens)

    def scores(self, question: str, *, forms_only: bool = False) -> dict[str, float]:
        """Each card's score for ``question`` (cards with none left out); ``forms_only``:
        from its question forms alone, without its signals."""
        return self._scores(question, forms_only=forms_only)[0]

    def _scores(
        self, question: str, *, forms_only: bool = False, code_too: bool = False
    ) -> tuple[dict[str, float], dict[str, Verdict | None]]:
        """The scores, and each card's verdict of the form that scored best for it.
        ``code_too``: the pasted code is what is asked about ("what does this print?")."""
        lowered = question.lower()
        # the learner's pasted statements name their variables and calls, not the question:
        # the words around them say what is asked (signals still see the whole question)
        prose = canonical(question if code_too else _without_statements(question))
        query = frozenset(tokenize(prose if len(tokenize(prose)) >= 2 else canonical(question)))
        out: dict[str, float] = {}
        verdicts: dict[str, Verdict | None] = {}
        asked_weight = max(self._weight(query), 1e-9)
        by_token, weights = self._by_token, self._form_weights
        candidates = sorted({i for t in query for i in by_token.get(t, ())})
        for i in candidates:  # in the forms' order, as a scan of every form would go
            card, tokens, verdict = self._forms[i]
            shared = tokens & query
            # how much of the form the question covers, and how much of the question the form
            common = self._weight(shared)
            cover = common / (weights[i] + FORM_SMOOTHING)
            focus = common / asked_weight
            score = 0.75 * cover + 0.25 * focus
            if score > out.get(card.id, 0.0):
                out[card.id] = score
                verdicts[card.id] = verdict
        said = _without_statements(question).lower()
        # the words around pasted code name what is asked when they name code themselves
        # ("but output.grad is None: how do I get it?"); a bare "why?" asks about the code
        focused = not code_too and _DOTTED_RE.search(said) is not None
        for card in self.cards if not forms_only else ():
            hits = [s for s in card.signals if s in lowered]
            if hits:
                # a whole error message says more than an API name that many cards mention
                longest = max(hits, key=len)
                bonus = 0.5 + 2.0 * min(len(longest), 50) / 50
                if focused and longest not in said:
                    # only inside the code pasted as context (``Variable(...)`` in a question
                    # about output.grad): it names what the code uses, not what is asked
                    bonus *= PASTED_SIGNAL_SHARE
                out[card.id] = out.get(card.id, 0.0) + bonus
        return out, verdicts

    @cached_property
    def _fact_keys(self) -> tuple[str, ...]:
        """The code facts some card names."""
        return tuple(dict.fromkeys(use.fact for card in self.cards for use in card.code_facts))

    def _code_shows(self, code: str) -> frozenset[str]:
        """The code facts the learner's ``code`` shows (of those some card names)."""
        if not code.strip() or not self._fact_keys:
            return frozenset()
        from tutor.chat.code_facts import find

        return frozenset(f.key for f in find(code, self._fact_keys))

    def match(self, question: str, *, extra: str = "", code: str = "") -> Match | None:
        """The card that answers ``question`` (``extra``: the learner's last error, matched as
        if quoted), or None when none answers it well enough. A question of several parts
        ("Why X? And should I also Y?") whose parts each match a card of their own surely
        gets the first part's match, with the later parts' in ``more``."""
        shown = self._code_shows(code)
        whole = self._match(question, extra=extra, shown=shown)
        segments = question_parts(question)
        if len(segments) < 2:
            return whole
        parts: list[Match] = []
        for segment in segments:
            found = self._match(segment, shown=shown)
            if found is None or not found.sure or not _asks_enough(segment):
                continue
            # a follow-up on the same lesson is the same topic: the first answer covers it
            if all(found.lessons.isdisjoint(p.lessons) for p in parts):
                parts.append(found)
        if len(parts) < 2:
            return whole
        if whole is not None and all(whole.card.id != p.card.id for p in parts):
            return whole  # the parts understood alone are not what the whole asks
        return dataclasses.replace(parts[0], more=tuple(parts[1:]))

    def _match(
        self, question: str, *, extra: str = "", shown: frozenset[str] = frozenset()
    ) -> Match | None:
        """The card for ``question`` taken whole; ``shown``: the code facts the learner's code
        shows (a card that names one and shares words with the question gains)."""
        if not about_pytorch(f"{question}\n{extra}") and not self.signalled(question) and \
                not self._compares_known_sides(question) and not self._asks_a_form(question):
            return None
        kind = question_kind(question)
        asked = f"{question}\n{extra}" if extra else question
        scores, verdicts = self._scores(asked, code_too=kind == "value")
        focus = asking_sentences(question)
        if focus and kind != "value" and len(set(tokenize(canonical(focus)))) >= 2:
            # what the asking sentences ask weighs as much as everything the question says
            # around them (its story, its pasted code)
            on_focus, focus_verdicts = self._scores(focus)
            # only when the asking sentence alone is understood: "is it safe to remove it?"
            # means what the sentences before it say
            if max(on_focus.values(), default=0.0) >= MIN_SCORE:
                focus_forms = self._scores(focus, forms_only=True)[0]
                self._refocus(question, asked, kind, scores, focus_forms)
                for cid, verdict in focus_verdicts.items():
                    if verdict:
                        verdicts[cid] = verdict

        from tutor.chat.asked import asked_point  # asked.py reads this module's kinds

        point = asked_point(question)
        self._cover(point, scores)

        def verdict_of(card: Card) -> Verdict | None:
            # a yes or no holds for what its card is about: a card that names none of what
            # the question asks about ("does model.eval() turn off gradients?" matched to a
            # no_grad card) says no yes or no about it
            if point.names and not point.names & self._names[card.id][1]:
                return None
            if point.choice:  # "..., or ...?" asks which, not whether
                return None
            return verdicts.get(card.id) or card.verdict

        # a comparison, or "does A do it, or do I still need B?"
        if kind == "compare" or point.sides is not None:
            self._both_sides(question, scores, point)
        for card in self.cards if shown else ():
            # what the learner's own code does says which of the cards near it is asked about
            if card.id in scores and any(use.fact in shown for use in card.code_facts):
                scores[card.id] += CODE_FACT_SHARE
        for card in self.cards:  # a card is not asked where its answer is false
            if card.unless and card.id in scores and re.search(card.unless, question, re.I):
                del scores[card.id]
        if not scores:
            return None
        by_id = {c.id: c for c in self.cards}
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        best_id, best = ranked[0]
        if best < MIN_SCORE:
            return None
        # among cards nearly as good, one shaped for this kind of question answers it better
        near = [by_id[cid] for cid, s in ranked if s >= max(MIN_SCORE, best * 0.5)]
        # ... and about as much of what is asked: a card shaped for "is it safe?" that speaks
        # of clipping does not answer "is it safe to call zero_grad() there?" better than the
        # zero_grad card does
        asked_of_best = point.names & self._names[best_id][0]
        if kind in ("can", "safe"):
            # a yes or no comes from a card's form: where a near card's form asks this
            # question nearly word for word, that card says it, not the one whose words are
            # most like it overall (a GAN card's "yes" about detaching fakes for "does
            # detach() copy memory?")
            asks = self._scores(question, forms_only=True)[0]
            if max((asks.get(c.id, 0.0) for c in near), default=0.0) >= WORDED_SCORE:
                near.sort(key=lambda c: -asks.get(c.id, 0.0))
        shaped = next((c for c in near if _fits(c, kind, verdict_of(c))
                       and asked_of_best <= self._names[c.id][0]), None)
        if kind == "compare":
            # a card comparing two other things answers another question: the card of what
            # is asked, else the best card that compares nothing
            shaped = next((c for c in near if _compares_asked(question, point, c)), None)
        if point.sides is not None and kind != "compare":
            # one thing or another: the card that tells the two apart answers it first
            sided = next((c for c in near if _sides_match(point.sides, c.sides)), None)
            shaped = sided or shaped
        if shaped is None and kind in ("can", "safe", "compare"):
            # "can I fix <error> with X?": the error's card explains the error, a card whose
            # forms ask about X answers the question
            forms, form_verdicts = self._scores(question, forms_only=True)
            # its form must ask nearly as well as the best form does, not merely share words
            floor = max(MIN_SCORE, 0.75 * max(forms.values(), default=0.0))
            fitting = [
                cid
                for cid, s in forms.items()
                if s >= floor
                and _fits(by_id[cid], kind, form_verdicts.get(cid) or by_id[cid].verdict)
                and asked_of_best <= self._names[cid][0]
                and (kind != "compare" or _compares_asked(question, point, by_id[cid]))
            ]
            if fitting:
                shaped = by_id[max(fitting, key=lambda cid: scores[cid])]
                verdicts[shaped.id] = form_verdicts.get(shaped.id)
        if shaped is None and kind == "compare":
            # the sides could not be told apart ("torch.Tensor 和 torch.tensor": one name but
            # for its case), yet a comparison card's own question form asks it nearly word for
            # word: that card compares what is asked
            forms = self._scores(question, forms_only=True)[0]
            worded = max(forms, key=lambda cid: forms[cid], default=None)
            if worded is not None and forms[worded] >= WORDED_SCORE and \
                    len(by_id[worded].sides) >= 2:
                shaped = by_id[worded]
        if shaped is None and kind == "compare":
            shaped = next((c for c in near if len(c.sides) < 2), None)
        shaped = shaped or by_id[best_id]
        covered = self.coverage(point, shaped)
        by_signal = scores[shaped.id] >= SIGNAL_SCORE
        return Match(
            shaped,
            scores[shaped.id],
            kind,
            by_signal=by_signal,
            read=shaped.read_for(question),
            verdict=None if not by_signal and covered < PARTIAL_COVER else verdict_of(shaped),
            covered=covered,
        )

    def _refocus(
        self,
        question: str,
        asked: str,
        kind: Kind,
        scores: dict[str, float],
        on_focus: dict[str, float],
    ) -> None:
        """``scores`` with half of each card's form score from the asking sentences. A signal
        the prose says (a quoted error, an API named in a sentence) keeps its whole weight;
        one only in the pasted code keeps the other half ("How do I compute the Jacobian
        efficiently?" after a loop of ``torch.autograd.grad`` calls)."""
        from tutor.chat.snippets import prose  # snippets reads this module's kinds

        forms, _ = self._scores(asked, forms_only=True, code_too=kind == "value")
        said, lowered = prose(question).lower(), asked.lower()
        by_id = {c.id: c for c in self.cards}
        for cid in set(scores) | set(on_focus):
            signal = scores.get(cid, 0.0) - forms.get(cid, 0.0)
            card = by_id[cid]
            spoken = any(s in said for s in card.signals if s in lowered)
            scores[cid] = (
                signal * (1.0 if spoken else 1 - FOCUS_SHARE)
                + (1 - FOCUS_SHARE) * forms.get(cid, 0.0)
                + FOCUS_SHARE * on_focus.get(cid, 0.0)
            )

    def _compares_known_sides(self, question: str) -> bool:
        """Whether ``question`` compares two things one card's sides name, by their API
        names or words ("view vs reshape?": both plain words to the anchors): that places it
        in PyTorch as surely as an anchor word."""
        from tutor.chat.asked import asked_point  # asked.py reads this module's kinds

        sides = asked_point(question).sides
        if sides is None or not all(side.names or side.words for side in sides):
            return False
        return any(len(card.sides) >= 2 and _sides_match(sides, card.sides)
                   for card in self.cards)

    def asks_form_of(self, question: str, card_id: str) -> bool:
        """Whether ``question`` asks nearly what one of that card's question forms asks."""
        forms = self._scores(question, forms_only=True)[0]
        return forms.get(card_id, 0.0) >= FORM_GATE_SCORE

    def _asks_a_form(self, question: str) -> bool:
        """Whether ``question`` asks nearly what one of the cards' question forms asks
        ("training gets slower every epoch", "GPU memory keeps growing"): a symptom told in
        plain words names no API, yet the forms are how learners ask about PyTorch, so it is
        placed there as surely as by an anchor word."""
        forms = self._scores(question, forms_only=True)[0]
        return max(forms.values(), default=0.0) >= FORM_GATE_SCORE

    def signalled(self, question: str) -> bool:
        """Whether ``question`` quotes a card's signal (an error message, an API name): that
        places it in PyTorch as surely as an anchor word."""
        lowered = question.lower()
        return any(s in lowered for card in self.cards for s in card.signals if len(s) >= 6)

    def _both_sides(self, question: str, scores: dict[str, float], point: AskedPoint) -> None:
        """A comparison is answered by the card that compares what the question compares:
        when the question names its two sides ("the difference between step() and
        backward()"), a card gains whose sides are those two; else each card whose sides'
        names all appear in the question gains."""
        asked = set(_IDENT_RE.findall(question.lower()))
        for card in self.cards:
            if len(card.sides) < 2:
                continue
            if point.sides is not None:
                if _sides_match(point.sides, card.sides):
                    scores[card.id] = scores.get(card.id, 0.0) + 1.5
                continue
            named = [_side_words(side.matched) for side in card.sides]
            if all(words & asked for words in named):
                scores[card.id] = scores.get(card.id, 0.0) + 1.5

    @cached_property
    def _names(self) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        """card id -> :func:`card_names` (the bundled cards' come from the book's cache)."""
        if self._cached_names is not None:
            return {
                card.id: (frozenset(about), frozenset(spoken))
                for card, (about, spoken) in zip(self.cards, self._cached_names, strict=True)
            }
        return {card.id: card_names(card) for card in self.cards}

    @cached_property
    def _said(self) -> dict[str, frozenset[str]]:
        """card id -> :func:`card_said` (the bundled cards' come from the book's cache)."""
        if self._cached_said is not None:
            return {
                card.id: frozenset(said)
                for card, said in zip(self.cards, self._cached_said, strict=True)
            }
        return {card.id: card_said(card) for card in self.cards}

    def coverage(self, point: AskedPoint, card: Card) -> float:
        """The share of the asking sentences' words (weighted by how rare they are in the
        cards' question forms) that ``card`` speaks of anywhere."""
        # the learner's own file and variable names (``post_training.py``) that no question
        # form has say nothing of what a card should speak of; words do
        known, talk = self._idf, _discourse()

        def said_of(text: str) -> frozenset[str]:
            return frozenset(
                t
                for t in tokenize(canonical(text))
                # an English word no form has is still a word; two Chinese characters no
                # form has are mostly the seam of two words ("释一", "给我")
                if (t in known or (t.isascii() and t.isalpha())) and t not in talk
            )

        asked = said_of(point.asking)
        if len(asked) < ASKS_ENOUGH:  # "Can you explain this to me?": the rest says what
            asked = said_of(point.said or point.asking)
        total = self._weight(asked)
        return self._weight(asked & self._said[card.id]) / total if total else 1.0

    def _cover(self, point: AskedPoint, scores: dict[str, float]) -> None:
        """Each card gains for the share of the asked point's names it speaks of: among cards
        that share the question's words, the one about what the asking sentences name
        answers them (a card about clipping does not answer "does the placement of
        zero_grad() matter?" because it shares "placement")."""
        counts, most = self._name_counts, COMMON_NAME_SHARE * len(self.cards)
        asked_names = {n for n in point.names if counts.get(n, 0) <= most}
        if not asked_names:
            return
        weight = self._name_weight
        # a question that names only what most cards mention says little about which one
        asked = max(sum(weight(n) for n in asked_names), NAMES_ENOUGH)
        for cid in scores:
            about, spoken = self._names[cid]
            covered = sum(weight(n) for n in asked_names & spoken)
            covered += sum(weight(n) for n in asked_names & about)
            scores[cid] += NAME_SHARE * covered / (2 * asked)

    def _name_weight(self, name: str) -> float:
        """How much naming ``name`` says: a name few cards are about (``zero_grad``) says more
        than one most of them mention (``backward``)."""
        counts = self._name_counts
        return math.log(1 + len(self.cards) / (1 + counts.get(name, 0)))

    @cached_property
    def _name_counts(self) -> Counter[str]:
        return Counter(n for _, spoken in self._names.values() for n in spoken)


_GENERIC = frozenset(
    {"t", "p", "x", "y", "torch", "a", "an", "the", "under", "manual", "update", "on", "of",
     "in", "to", "for", "with", "by", "data", "tensor", "tensors", "mode"}
)
"""Words of a side's name that do not tell the sides apart (a name is its other words)."""


def _side_words(name: str) -> set[str]:
    # one letter ("s" of "what's", "x") names no side
    return {w for w in _IDENT_RE.findall(name.lower()) if w not in _GENERIC and len(w) > 1}


def _sides_match(asked: tuple[AskedSide, AskedSide], sides: tuple[Side, ...]) -> bool:
    """Whether a card's sides are the two sides a question compares: each asked side is
    named by a different side of the card (by its API names, else by its words)."""
    from tutor.chat.asked import api_names

    def names(side: Side) -> tuple[frozenset[str], set[str]]:
        return api_names(side.matched), _side_words(side.matched)

    def fits(want: AskedSide, other: AskedSide, side: Side) -> bool:
        side_names, side_words = names(side)
        if want.names:
            return bool(want.names & side_names)
        # a word both asked sides have ("loss" of float(loss) and loss.item()) tells neither
        # apart: the side is named by its own words
        own = set(want.words) - set(other.words) or set(want.words)
        return bool(own & side_words)

    a, b = asked
    return any(
        fits(a, b, first) and fits(b, a, second)
        for first in sides
        for second in sides
        if first is not second
    )


def _compares_asked(question: str, point: AskedPoint, card: Card) -> bool:
    """Whether ``card`` compares what the comparison ``question`` compares: the two sides
    it names, where both were read; else (a side not read: "它", or no sides) one of the
    card's sides named in the question by what sets it apart from the others ("one
    backward() of the sum" and "two backward() calls" are not named by "backward")."""
    if len(card.sides) < 2:
        return False
    if point.sides is not None and all(_names_a_side(side) for side in point.sides):
        return _sides_match(point.sides, card.sides)
    asked = set(_IDENT_RE.findall(question.lower()))
    words = [_side_words(side.matched) for side in card.sides]
    own = [w - set().union(*(o for o in words if o is not w)) for w in words]
    return any(w & asked for w in own)


def _names_a_side(side: AskedSide) -> bool:
    """Whether an asked side was read as something: an API, or a word of code or English."""
    return bool(side.names) or any(w.isascii() and len(w) > 1 and w not in _GENERIC
                                   for w in side.words)


def _fits(card: Card, kind: Kind, verdict: Verdict | None) -> bool:
    if kind in ("can", "safe"):
        return verdict is not None
    if kind == "compare":
        return bool(card.sides)
    if kind == "fails":
        return card.fix is not None
    return False


_VERDICT = {
    ("yes", "en"): "Yes.",
    ("no", "en"): "No.",
    ("depends", "en"): "It depends.",
    ("yes", "zh"): "是的。",
    ("no", "zh"): "不行。",
    ("depends", "zh"): "要看情况。",
}
_SAFE_VERDICT = {("yes", "zh"): "安全。", ("no", "zh"): "不安全。"}
_LABELS = {
    "fix": Pair("**Fix:**", "**怎么改：**"),
    "example": Pair("Example:", "例子："),
    "read": Pair(
        "Read: lesson “{lesson}” ({lesson_id}), step “{step}” ({ref}).",
        "参阅：课程“{lesson}”（{lesson_id}）的步骤“{step}”（{ref}）。",
    ),
    "also": Pair(
        "See also: lesson “{lesson}” ({lesson_id}), step “{step}” ({ref}).",
        "另见：课程“{lesson}”（{lesson_id}）的步骤“{step}”（{ref}）。",
    ),
    "partial": Pair(
        "I have no answer for exactly this; the nearest thing I know:",
        "这个问题我没有确切的答案；我知道的最接近的内容是：",
    ),
    "tensor": Pair("the tensor", "该张量"),
    "output": Pair("the output", "输出"),
}


PARTIAL = _LABELS["partial"]
"""How an answer from a card that speaks of nothing the question asks starts."""


def _code_fill(code: str, placeholder: str, name: str | None) -> str:
    """``{t}`` inside code: the learner's name, else the call on its own (``.retain_grad()``,
    ``torch.ones_like(...)``) rather than a name the learner does not have; anywhere else
    ``...`` stands for it (``...[0].backward()``, ``... -= ...``)."""
    if name:
        return code.replace(placeholder, name)
    code = code.replace(f"{placeholder}[", "...[").replace(f"({placeholder})", "(...)")
    if code.startswith(f"{placeholder}."):  # its member alone: `.retain_grad()`
        code = code[len(placeholder):]
    return code.replace(placeholder, "...")


_EITHER_RE = re.compile(r"(`[^`]*`)\{or: ([^{}]*(?:\{[a-z_]+\}[^{}]*)*)\}")
"""A span with what to say instead where the learner names none of its parts:
``{t} -= {lr} * {t}.grad``{or: subtract the learning rate times ``.grad``}."""


def _fill(text: str, names: Names, lang: str) -> str:
    """``text`` with its placeholders filled: ``{t}``, ``{out}`` and the roles (roles.py) by
    the learner's names, else by words that name no variable; a span that gives its words
    (``{or: ...}``) says them where the learner names any of its parts."""
    from tutor.chat.roles import fill_span, fill_words

    t = f"`{names.grad_of}`" if names.grad_of else _LABELS["tensor"].get(lang)
    out = f"`{names.backward_of}`" if names.backward_of else _LABELS["output"].get(lang)
    named = dict(names.roles)

    known = {"t": names.grad_of, "out": names.backward_of, **named}

    def either(m: re.Match[str]) -> str:
        # `code`{or: words}: the code where the learner names everything it needs, else words
        needed = re.findall(r"\{([a-z_]+)\}", m.group(1))
        return m.group(1) if all(known.get(key) for key in needed) else m.group(2)

    def in_code(m: re.Match[str]) -> str:
        if m.group(1) in ("{t}", "{out}"):  # the tensor alone: its name, or words
            return t if m.group(1) == "{t}" else out
        code = _code_fill(m.group(1), "{t}", names.grad_of)
        return fill_span(_code_fill(code, "{out}", names.backward_of), named, lang)

    text = _EITHER_RE.sub(either, text)
    text = re.sub(r"`([^`]*)`", in_code, text)
    text = fill_words(text.replace("{t}", t).replace("{out}", out), named, lang)
    # a sentence that now starts with "the tensor" or "your optimizer's" starts with a capital
    return re.sub(r"(^|[.!?]\s+)(the |your )",
                  lambda m: m.group(1) + m.group(2).capitalize(), text)


_COMMENT_RE = re.compile(r"(\s*)#(.*)$")
_WORD_RE = re.compile(r"(?<![.\w])[A-Za-z]{3,}\b(?![.(])")


def _without_prose_comments(code: str) -> str:
    """``code`` for a Chinese answer: comments in English words are left out (a comment that
    is a value or code, ``# tensor([2., 4.])``, stays): the answer keeps to one language."""
    names = set(_IDENT_RE.findall(re.sub(r"#.*", "", code)))
    lines = []
    for line in code.splitlines():
        code_part, hash_, comment = line.partition("#")
        words = set(_WORD_RE.findall(comment)) - names - {"tensor", "True", "False", "None"}
        lines.append(code_part.rstrip() if hash_ and words else line)
    return "\n".join(lines)


_LEADS: dict[str, tuple[str, ...]] = {
    "can": ("verdict", "why", "answer", "steps", "fix", "pitfall"),
    "safe": ("verdict", "why", "answer", "steps", "fix", "pitfall"),
    "why": ("why", "answer", "fix", "steps", "pitfall"),
    "fails": ("why", "answer", "fix", "steps", "pitfall"),
    "how": ("steps", "answer", "why", "fix", "pitfall"),
    "compare": ("sides", "answer", "why", "pitfall"),
    "what": ("answer", "why", "steps", "pitfall"),
    "value": ("answer", "why", "steps", "pitfall"),
}
"""The facets of a card in the order a question of each kind asks for them: the first one
it has leads (a "why" gets the cause, a "how" the steps, "can I" the yes or no and its
condition), the rest follow."""
_FIX_KINDS = frozenset({"fails", "how", "why", "safe", "can"})
_LIST_RE = re.compile(r"^(- |\d+\. )")
_OPENS_WITH_VERDICT = re.compile(
    r"^(?:(?:yes|no|mostly|roughly|it depends)\b|是的|可以|不行|不能|不会|不用|不需要|不必|"
    r"不是|大致|基本|要看)",
    re.IGNORECASE,
)
"""An answer that opens with its own yes or no (in Chinese no word boundary follows one:
"不能：" is no "不" then a word) gets no second one."""


def _verdict_word(kind: str, verdict: str, lang: str) -> str:
    first = _SAFE_VERDICT.get((verdict, lang)) if kind == "safe" else None
    return first or _VERDICT[(verdict, lang)]


def _joined(first: str, rest: str, lang: str) -> str:
    return f"{first} {rest}" if lang == "en" else f"{first}{rest}"


def _facets(
    match: Match, lang: str, names: Names, facts: list[CodeFact], *, brief: bool
) -> list[str]:
    """The paragraphs of ``match``'s card for its question's kind: what the learner's code
    already does first, then the facet the kind asks for, then the others (``brief``: the
    leading one only, for one part of a question that asks several things)."""
    card, kind = match.card, match.kind

    def fill(text: str) -> str:
        return _fill(text, names, lang)

    verdict = match.verdict
    if kind in ("can", "safe"):
        # what the learner's own code does decides a yes/no about it
        uses = {use.fact: use.verdict for use in card.code_facts}
        verdict = next((uses[f.key] for f in facts if uses.get(f.key)), verdict)
    said: dict[str, str] = {}
    answer = fill(card.answer.get(lang))
    said["answer"] = answer
    if card.why:
        said["why"] = fill(card.why.get(lang))
    if card.steps:
        said["steps"] = "\n".join(
            f"{n}. {fill(step.get(lang))}" for n, step in enumerate(card.steps, start=1)
        )
    if card.sides:
        said["sides"] = "\n".join(
            f"- {fill(side.name_in(lang))}: {fill(side.zh if lang == 'zh' else side.en)}"
            for side in card.sides
        )
    if card.fix and kind in _FIX_KINDS:
        said["fix"] = f"{_LABELS['fix'].get(lang)} {fill(card.fix.get(lang))}"
    if card.pitfall:
        said["pitfall"] = fill(card.pitfall.get(lang))
    order = [facet for facet in _LEADS.get(kind, _LEADS["what"]) if facet in said]
    if "sides" in said and "sides" not in order:  # a comparison card keeps its sides
        order.insert(0, "sides")
    body: list[str] = []
    if verdict and kind in ("can", "safe") and card.condition:
        body.append(fill(card.condition.get(lang)))
    # brief: the condition (for a yes/no) and the leading facet
    limit = len(body) + 1 if brief else len(order) + len(body)
    shown = [_worded(fact, lang) for fact in facts]
    for facet in order:
        if len(body) >= limit:
            break
        if not repeats(said[facet], [*shown, *body]):
            body.append(said[facet])
    parts = shown + body
    if verdict and kind in ("can", "safe") and parts:
        # the yes or no comes first, once (the card's answer may open with its own)
        prose_at = next((i for i, p in enumerate(parts) if not _LIST_RE.match(p)), None)
        # only the paragraph that would get it can already open with one ("Not after an
        # ordinary backward()" further down is no verdict)
        if prose_at is not None and not _OPENS_WITH_VERDICT.match(parts[prose_at]):
            parts[prose_at] = _joined(_verdict_word(kind, verdict, lang), parts[prose_at], lang)
    return parts


REPEAT_SHARE = 0.75
"""A paragraph whose words are this much in the paragraphs before it says nothing new."""


def repeats(paragraph: str, before: list[str]) -> bool:
    """Whether ``paragraph`` (a facet) repeats what the paragraphs ``before`` it say: a card's
    answer and its why often restate what the learner's code fact already said."""
    if not before or _LIST_RE.match(paragraph):
        return False
    words = set(tokenize(paragraph))
    seen = set(tokenize(" ".join(before)))
    return bool(words) and len(words & seen) >= REPEAT_SHARE * len(words)


def _facts_in(code: str, card: Card) -> list[CodeFact]:
    if not card.code_facts:
        return []
    from tutor.chat.code_facts import find  # only for a card that names code facts

    return find(code, [use.fact for use in card.code_facts])


def _worded(fact: CodeFact, lang: str) -> str:
    from tutor.chat.code_facts import worded  # only when the learner's code shows a fact

    return worded(fact, lang)


def compose(
    match: Match,
    lang: str,
    names: Names,
    titles: dict[str, tuple[str, str]] | None = None,
    code: str = "",
    *,
    brief: bool = False,
) -> str:
    """The answer's Markdown, shaped by the question's kind. ``titles``: LESSON/STEP ->
    (lesson title, step title) in ``lang``, for the line that says what to read; ``code``:
    the learner's code (pasted in the question, or the editor's), read for what it already
    does. A question of several parts gets a short paragraph for each, in order; ``brief``:
    the leading facet only (what follows a run's output answers the rest of a question)."""
    matches = [match, *match.more]
    brief = brief or len(matches) > 1
    parts: list[str] = []
    for one in matches:
        facts = _facts_in(code, one.card) if code else []
        parts += _facets(one, lang, names, facts, brief=brief)
        if one is match and match.partial and not facts:
            # a card that speaks of nothing the question asks, and whose facts the learner's
            # code does not show, is offered as what it is
            parts.insert(0, _LABELS["partial"].get(lang))
    card = match.card
    if card.example and not brief:
        example = card.example if lang == "en" else _without_prose_comments(card.example)
        parts.append(f"```python\n{example}\n```")
    refs: list[str] = []
    for one in matches:
        refs += [r for r in (one.read,) if r not in refs]
    for ref in refs:
        if titles and ref in titles:
            lesson, step = titles[ref]
            lesson_id = ref.partition("/")[0]
            parts.append(
                _LABELS["read"].get(lang).format(
                    lesson=lesson, lesson_id=lesson_id, step=step, ref=ref
                )
            )
    if card.also and titles and card.also in titles and card.also not in refs and not brief:
        lesson, step = titles[card.also]
        lesson_id = card.also.partition("/")[0]
        parts.append(
            _LABELS["also"]
            .get(lang)
            .format(lesson=lesson, lesson_id=lesson_id, step=step, ref=card.also)
        )
    return "\n\n".join(parts)


def answer_language(question: str) -> str:
    return "zh" if has_cjk(question) else "en"
