"""Answer cards: questions learners really ask, answered in the shape the question asks for.

A question is matched to a card (``cards.yaml``) by the card's signals (an error message, an
API call quoted in the question) and by how much of one of its question forms the question
covers; its kind (``kinds.yaml``: what / why / how / compare / can / safe / value / fails)
decides the answer's shape: a comparison gives both sides, "can I" and "is it safe" start with
yes or no, an error gives its cause and then the fix. ``{t}`` and ``{out}`` in a card are
filled with the learner's own names (the tensor whose ``.grad`` they ask about, the tensor they
call ``backward()`` on) or a plain noun, so an answer never names a variable the learner does
not have.

Plain dataclasses and the stdlib only: ``tutor ask`` answers from here without importing
pydantic or building the retrieval index. ``CARD_SET`` is validated by pydantic in the tests.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from tutor.chat.tokens import has_cjk, tokenize

DATA = Path(__file__).with_name("cards.yaml")
KINDS = Path(__file__).with_name("kinds.yaml")

Kind = Literal["what", "why", "how", "compare", "can", "safe", "value", "fails"]
Verdict = Literal["yes", "no", "depends"]
MIN_SCORE = 0.55
"""Below this a card does not answer: the question goes to the retrieval over the course."""
SIGNAL_SCORE = 2.0
"""A signal this strong (a quoted error message) answers by itself."""
FORM_SMOOTHING = 2.5
"""Added to a form's weight: a form of one or two common words ("what is a gradient") is not
covered by a question that merely says "grad"."""


@dataclass(frozen=True)
class Pair:
    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class Side:
    name: str
    en: str
    zh: str


@dataclass(frozen=True)
class ReadIf:
    when: str
    """A regular expression the question matches."""
    read: str


@dataclass(frozen=True)
class Forms:
    en: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()


@dataclass(frozen=True)
class Card:
    """One question learners ask, and its answer."""

    id: str
    read: str
    """LESSON/STEP to read."""
    answer: Pair
    forms: Forms = Forms()
    signals: tuple[str, ...] = ()
    verdict: Verdict | None = None
    sides: tuple[Side, ...] = ()
    fix: Pair | None = None
    example: str | None = None
    read_if: tuple[ReadIf, ...] = ()
    """Another step to read when the question describes that situation."""
    also: str | None = None
    """A second LESSON/STEP that teaches the way around (named after the one to read)."""

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


@dataclass(frozen=True)
class Names:
    """The learner's own names an answer may use."""

    grad_of: str | None = None
    backward_of: str | None = None
    all: frozenset[str] = field(default_factory=frozenset)


def _pair(raw: dict[str, str]) -> Pair:
    return Pair(en=str(raw["en"]).strip(), zh=str(raw["zh"]).strip())


def _card(raw: dict) -> Card:  # type: ignore[type-arg]
    forms = raw.get("forms") or {}
    return Card(
        id=raw["id"],
        read=raw["read"],
        answer=_pair(raw["answer"]),
        forms=Forms(en=tuple(forms.get("en", ())), zh=tuple(forms.get("zh", ()))),
        signals=tuple(s.lower() for s in raw.get("signals", ())),
        verdict=raw.get("verdict"),
        sides=tuple(
            Side(s["name"], s["en"].strip(), s["zh"].strip()) for s in raw.get("sides", ())
        ),
        fix=_pair(raw["fix"]) if raw.get("fix") else None,
        example=raw["example"].rstrip() if raw.get("example") else None,
        read_if=tuple(ReadIf(r["when"], r["read"]) for r in raw.get("read_if", ())),
        also=raw.get("also"),
    )


def load_raw(path: Path = DATA) -> dict:  # type: ignore[type-arg]
    from tutor.yaml_read import read_yaml

    return read_yaml(path)  # type: ignore[no-any-return]


@lru_cache(maxsize=4)
def load_cards(path: Path = DATA) -> CardSet:
    return CardSet(cards=tuple(_card(c) for c in load_raw(path)["cards"]))


@lru_cache(maxsize=1)
def _kind_patterns() -> tuple[tuple[Kind, re.Pattern[str]], ...]:
    from tutor.yaml_read import read_yaml

    out = []
    for entry in read_yaml(KINDS)["kinds"]:
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
    from tutor.yaml_read import read_yaml

    return tuple(a.lower() for a in read_yaml(KINDS)["anchors"])


def about_pytorch(question: str) -> bool:
    """Whether ``question`` names anything of PyTorch or autograd (kinds.yaml's anchors)."""
    lowered = question.lower()
    return any(anchor in lowered for anchor in _anchors())


_PASTED_RE = re.compile(r"^\s*[A-Za-z_][\w.\[\]]*\s*(=|\+=|-=)[^=]|^\s*print\(|^\s*import ")


def _without_statements(question: str) -> str:
    parts = re.split(r";|\n", question)
    return " ".join(p for p in parts if not _PASTED_RE.match(p))


def question_kind(question: str) -> Kind:
    """The kind of ``question``: the first kind in kinds.yaml whose patterns match."""
    text = _CODE_SPAN_RE.sub(" ", question)
    for kind, pattern in _kind_patterns():
        if kind == "fails":
            continue
        if pattern.search(text):
            return kind
    return (
        "fails"
        if _QUOTED_ERROR_RE.search(question) or _kind_patterns()[-1][1].search(text)
        else "what"
    )


_GRAD_OF_RE = re.compile(
    r"((?:[A-Za-z_]\w*)(?:\[[^\]\n]{1,20}\])?(?:\.[A-Za-z_]\w*)*?)\.grad\b(?!_)"
)
_BACKWARD_OF_RE = re.compile(r"((?:[A-Za-z_]\w*)(?:\[[^\]\n]{1,20}\])?)\.backward\(")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_NOT_NAMES = frozenset({"torch", "nn", "self", "np", "F", "optim", "optimizer", "model"})


def learner_names(question: str, code: str = "", error_line: str = "") -> Names:
    """The names in the learner's question, code and last error that an answer may use."""
    text = "\n".join(part for part in (question, error_line, code) if part)
    grad_of = next(
        (m for m in _GRAD_OF_RE.findall(text) if m.split(".")[0] not in _NOT_NAMES), None
    )
    backward_of = next(
        (m for m in _BACKWARD_OF_RE.findall(text) if m not in _NOT_NAMES and m != "autograd"),
        None,
    )
    return Names(grad_of=grad_of, backward_of=backward_of, all=frozenset(_IDENT_RE.findall(text)))


class CardBook:
    """Matches questions to cards."""

    def __init__(self, cards: CardSet | None = None):
        self.cards = (cards or load_cards()).cards
        self._forms: list[tuple[Card, frozenset[str]]] = []
        df: Counter[str] = Counter()
        for card in self.cards:
            for form in (*card.forms.en, *card.forms.zh):
                tokens = frozenset(tokenize(form))
                if tokens:
                    self._forms.append((card, tokens))
                    df.update(tokens)
        n = max(len(self._forms), 1)
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}

    def _weight(self, tokens: frozenset[str]) -> float:
        return sum(self._idf.get(t, math.log(1 + len(self._forms))) for t in tokens)

    def scores(self, question: str, *, forms_only: bool = False) -> dict[str, float]:
        """Each card's score for ``question`` (cards with none left out); ``forms_only``:
        from its question forms alone, without its signals."""
        lowered = question.lower()
        # the learner's pasted statements name their variables and calls, not the question:
        # the words around them say what is asked (signals still see the whole question)
        prose = _without_statements(question)
        query = frozenset(tokenize(prose if len(tokenize(prose)) >= 2 else question))
        out: dict[str, float] = {}
        for card, tokens in self._forms:
            shared = tokens & query
            if not shared:
                continue
            # how much of the form the question covers, and how much of the question the form
            cover = self._weight(shared) / (self._weight(tokens) + FORM_SMOOTHING)
            focus = self._weight(shared) / max(self._weight(query), 1e-9)
            score = 0.75 * cover + 0.25 * focus
            out[card.id] = max(out.get(card.id, 0.0), score)
        for card in self.cards if not forms_only else ():
            hits = [s for s in card.signals if s in lowered]
            if hits:
                # a whole error message says more than an API name that many cards mention
                bonus = 0.5 + 2.0 * min(len(max(hits, key=len)), 50) / 50
                out[card.id] = out.get(card.id, 0.0) + bonus
        return out

    def match(self, question: str, *, extra: str = "") -> Match | None:
        """The card that answers ``question`` (``extra``: the learner's last error, matched as
        if quoted), or None when none answers it well enough."""
        if not about_pytorch(f"{question}\n{extra}"):
            return None
        kind = question_kind(question)
        scores = self.scores(f"{question}\n{extra}" if extra else question)
        if kind == "compare":
            self._both_sides(question, scores)
        if not scores:
            return None
        by_id = {c.id: c for c in self.cards}
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        best_id, best = ranked[0]
        if best < MIN_SCORE:
            return None
        # among cards nearly as good, one shaped for this kind of question answers it better
        near = [by_id[cid] for cid, s in ranked if s >= max(MIN_SCORE, best * 0.5)]
        shaped = next((c for c in near if _fits(c, kind)), None)
        if shaped is None and kind in ("can", "safe", "compare"):
            # "can I fix <error> with X?": the error's card explains the error, a card whose
            # forms ask about X answers the question
            forms = self.scores(question, forms_only=True)
            fitting = [
                cid for cid, s in forms.items() if s >= MIN_SCORE and _fits(by_id[cid], kind)
            ]
            if fitting:
                shaped = by_id[max(fitting, key=lambda cid: scores[cid])]
        shaped = shaped or by_id[best_id]
        return Match(
            shaped,
            scores[shaped.id],
            kind,
            by_signal=scores[shaped.id] >= SIGNAL_SCORE,
            read=shaped.read_for(question),
        )

    def _both_sides(self, question: str, scores: dict[str, float]) -> None:
        """A comparison is answered by the card that compares what the question names: each
        card whose sides' names all appear in the question gains."""
        asked = set(_IDENT_RE.findall(question.lower()))
        for card in self.cards:
            if len(card.sides) < 2:
                continue
            named = [_side_words(side.name) for side in card.sides]
            if all(words & asked for words in named):
                scores[card.id] = scores.get(card.id, 0.0) + 1.5


_GENERIC = frozenset({"t", "p", "x", "y", "torch", "a", "an", "the", "under", "manual", "update"})


def _side_words(name: str) -> set[str]:
    return {w for w in _IDENT_RE.findall(name.lower()) if w not in _GENERIC}


def _fits(card: Card, kind: Kind) -> bool:
    if kind in ("can", "safe"):
        return card.verdict is not None
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
    "tensor": Pair("the tensor", "该张量"),
    "output": Pair("the output", "输出"),
}


def _code_fill(code: str, placeholder: str, name: str | None) -> str:
    """``{t}`` inside code: the learner's name, else the call on its own (``.retain_grad()``,
    ``torch.ones_like(...)``) rather than a name the learner does not have."""
    if name:
        return code.replace(placeholder, name)
    return code.replace(f"({placeholder})", "(...)").replace(placeholder, "")


def _fill(text: str, names: Names, lang: str) -> str:
    t = f"`{names.grad_of}`" if names.grad_of else _LABELS["tensor"].get(lang)
    out = f"`{names.backward_of}`" if names.backward_of else _LABELS["output"].get(lang)

    def in_code(m: re.Match[str]) -> str:
        code = _code_fill(m.group(1), "{t}", names.grad_of)
        return "`" + _code_fill(code, "{out}", names.backward_of) + "`"

    text = re.sub(r"`([^`]*)`", in_code, text)
    text = text.replace("{t}", t).replace("{out}", out)
    # a sentence that now starts with "the tensor" starts with a capital
    return re.sub(r"(^|[.!?]\s+)(the )", lambda m: m.group(1) + "The ", text)


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


def compose(
    match: Match,
    lang: str,
    names: Names,
    titles: dict[str, tuple[str, str]] | None = None,
) -> str:
    """The answer's Markdown, shaped by the question's kind. ``titles``: LESSON/STEP ->
    (lesson title, step title) in ``lang``, for the line that says what to read."""
    card, kind = match.card, match.kind
    parts: list[str] = []
    answer = _fill(card.answer.get(lang), names, lang)
    if kind in ("can", "safe") and card.verdict:
        first = _SAFE_VERDICT.get((card.verdict, lang)) if kind == "safe" else None
        first = first or _VERDICT[(card.verdict, lang)]
        # the card's answer may already open with its verdict ("Yes — ..."): say it once
        if not re.match(r"^(yes|no|是的|可以|不行|不)\b", answer, re.IGNORECASE):
            answer = f"{first} {answer}" if lang == "en" else f"{first}{answer}"
    if card.sides:
        lines = [
            f"- {side.name}: {_fill(side.zh if lang == 'zh' else side.en, names, lang)}"
            for side in card.sides
        ]
        parts.append("\n".join(lines))
    parts.append(answer)
    if card.fix and kind in ("fails", "how", "why", "safe", "can"):
        parts.append(f"{_LABELS['fix'].get(lang)} {_fill(card.fix.get(lang), names, lang)}")
    if card.example:
        example = card.example if lang == "en" else _without_prose_comments(card.example)
        parts.append(f"```python\n{example}\n```")
    ref = match.read
    if titles and ref in titles:
        lesson, step = titles[ref]
        lesson_id = ref.partition("/")[0]
        parts.append(
            _LABELS["read"].get(lang).format(lesson=lesson, lesson_id=lesson_id, step=step, ref=ref)
        )
    if card.also and titles and card.also in titles and card.also != ref:
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
