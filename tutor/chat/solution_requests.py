"""Is the learner asking to be given the step's answer? A compositional detector.

A fixed phrase list misses every new wording ("paste the working version", "这个空填多少").
Requests are composed of parts instead, each a short list of patterns in
``solution_requests.yaml``: an *ask* (give/tell/paste/what is/should be/fill in, 给/发/告诉/
直接/填/是多少) combined, in one clause, with an *answer object* (the answer, the solution,
the working version, 答案/完整代码); or with code or a value (code, number, result, 代码/
多少/值) when the learner is on a step or points at it ("the box", "这一步"); or a value ask
about one of the step's own expressions ("what should x.grad be"); a named part of the step's
code handed over ("write forward out for me"); anything asked for to copy ("我抄一下就行");
the change that fixes the step ("第一行改成啥", "what do I change it to"); a version someone
already has (the corrected/working one, yours, 改好的/你的代码). "Help me write X" is a request
only when X is about the course. A clause that asks to understand (why/how does/what is the
difference, 为什么/怎么理解) or is about something going wrong ("报错的那题") asks about that,
not for the answer; another clause may still ask ("no need for the why, paste it").
:func:`detect` also says which composition decided.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from tutor.chat.bilingual import Both, Patterns
from tutor.data_cache import read_data

PATH = Path(__file__).with_name("solution_requests.yaml")
_PART_RE = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)
_CLAUSE_RE = re.compile(r"[,;:!?，；：！？。\n]|\.(?=\s|$)|\b(?:but|and then|so)\b")


P = TypeVar("P")


@dataclass(frozen=True)
class RequestParts(Generic[P]):
    """The parts a solution request is composed of (see the YAML). A dataclass, not a
    pydantic model, so that ``tutor ask`` can tell a solution request without pydantic; the
    tests validate the YAML against it with pydantic."""

    ask: P
    answer_object: P
    code_object: P
    value_object: P
    fix_object: P
    pointer: P
    value_ask: P
    produce: P
    copy_intent: P
    do_for_me: P
    no_explanation: P
    explanatory: P
    trouble: P


@dataclass(frozen=True)
class Evidence:
    """What matched in one question, and the verdict."""

    request: bool
    reason: str
    """Which composition decided: 'answer', 'fix', 'code', 'value', 'expression', 'part',
    'copy', 'do-for-me', 'explanatory' (an explanatory or trouble cue that vetoed), or ''
    (nothing asked for)."""


class _Compiled:
    """Each part's patterns, both languages, as one regular expression, compiled when a
    question first needs that part: most questions never reach the parts about a step
    (code, values, fixes), and compiling all of them was a shell question's largest cost."""

    def __init__(self, parts: RequestParts[Patterns]) -> None:
        self._parts = parts

    def __getattr__(self, name: str) -> re.Pattern[str]:
        patterns: Patterns = getattr(self._parts, name)
        compiled = re.compile(
            "|".join(f"(?:{x})" for x in [*patterns.en, *patterns.zh]), re.IGNORECASE
        )
        setattr(self, name, compiled)
        return compiled


@lru_cache(maxsize=1)
def _compiled() -> RequestParts[re.Pattern[str]]:
    parts = parse_parts(read_data(PATH))
    # the same attributes as RequestParts, each compiled on first use
    return cast(RequestParts[re.Pattern[str]], _Compiled(parts))


def parse_parts(data: dict[str, Any]) -> RequestParts[Patterns]:
    """The YAML's data as RequestParts; an unknown or missing part is an error."""
    fields = set(RequestParts.__dataclass_fields__)
    if set(data) != fields:
        raise ValueError(f"solution_requests.yaml: parts {sorted(set(data) ^ fields)} differ")
    parts: dict[str, Patterns] = {}
    for name, value in data.items():
        if set(value) - {"en", "zh"}:
            raise ValueError(f"solution_requests.yaml: {name}: only en and zh")
        parts[name] = Both(en=tuple(value.get("en", ())), zh=tuple(value.get("zh", ())))
    return RequestParts(**parts)


def clauses(question: str) -> list[str]:
    """``question`` cut at punctuation and clause joints (a dot inside ``x.grad`` stays)."""
    return [c.strip() for c in _CLAUSE_RE.split(question) if c and c.strip()]


def _mentions(text: str, expr: str) -> bool:
    """Whether ``text`` names ``expr`` as written (``x.grad`` not inside ``xx.grad``)."""
    end = r"(?![\w(])" if expr[-1:].isalnum() or expr[-1:] == "_" else ""
    return re.search(rf"(?<![\w.]){re.escape(expr)}{end}", text) is not None


def step_expressions(exprs: Iterable[str]) -> list[str]:
    """The expressions worth recognising in a question: a one-letter variable ("x") says
    nothing; ``x.grad``, ``z.grad_fn``, ``loss.item()`` do."""
    out = []
    for expr in exprs:
        e = expr.strip()
        if len(e) >= 3 and re.search(r"[.(\[]", e):
            out.append(e)
    return out


def step_code_parts(code: str) -> list[str]:
    """The named parts of a step's code (``def forward``, ``class Net``): asking to be
    handed one of them on that step is asking for its solution."""
    return sorted(set(_PART_RE.findall(code)))


def detect(
    question: str,
    *,
    on_step: bool = False,
    step_exprs: Iterable[str] = (),
    step_parts: Iterable[str] = (),
    about_course: Callable[[], bool] | None = None,
) -> Evidence:
    """Whether ``question`` asks for the answer. ``on_step``: the learner is on an exercise;
    ``step_exprs``: that step's checked expressions; ``step_parts``: the names of the code
    parts it has the learner write (:func:`step_code_parts`); ``about_course``: whether the
    question is about autograd at all (asked only for "help me write X")."""
    c = _compiled()
    # "i don't need the why" turns an explanation down; a clause that asks to understand
    # ("why is the answer 4") is no request, but another clause may still ask for the answer
    said = c.no_explanation.sub(" ", question)
    kept = [clause for clause in clauses(said) if not c.explanatory.search(clause)]
    if not kept:
        return Evidence(False, "explanatory" if c.explanatory.search(said) else "")
    explained = len(kept) < len(clauses(said))
    question = "\n".join(kept)
    pointed = on_step or c.pointer.search(question) is not None
    exprs = step_expressions(step_exprs) if on_step else []
    parts = [p for p in step_parts if len(p) >= 3] if on_step else []
    if pointed and c.copy_intent.search(question) and c.ask.search(question):
        return Evidence(True, "copy")
    # naming the answer asks for it, in whichever clause ("... y.grad 等于 2y ... 请直接给我完整
    # 答案"): that decides before a value or code named earlier does
    for clause in clauses(question):
        if c.answer_object.fullmatch(clause.strip(" ?？!！.。~")):  # "solution?", "答案？"
            return Evidence(True, "answer")
        if _asks(c.ask, clause) and c.answer_object.search(clause):
            return Evidence(True, "answer")
    # on an exercise (or pointing at one), speaking of its answer is about having it, however
    # it is put ("if I can't find the answer myself, I can check it here. This one: ..."):
    # the request need not be a grammatical ask. Not where something went wrong (the learner's
    # own solution fails) or an ask is denied (a library has no one-shot solution)
    if pointed and not c.trouble.search(question) and any(
            c.answer_object.search(clause) and not _negated(c.ask, clause)
            for clause in clauses(question)):
        return Evidence(True, "answer")
    # where something went wrong too (the pasted exercise's own error), a question about
    # having the answer, asked in a clause of its own, still asks for it ("Any chance you
    # still have a copy of the official solutions?")
    if pointed and any(
            c.answer_object.search(clause) and _QUESTION_RE.search(clause)
            and not c.trouble.search(clause) and not _negated(c.ask, clause)
            and not _MINE_RE.search(clause) and not c.explanatory.search(clause)
            for clause in _asked_clauses(said)):
        return Evidence(True, "answer")
    for clause in clauses(question):
        if pointed and c.fix_object.search(clause):  # "第一行改成啥": the change itself
            return Evidence(True, "fix")
        if not _asks(c.ask, clause):
            continue
        if c.trouble.search(clause):  # this clause is about what went wrong
            continue
        if pointed and c.code_object.search(clause):
            return Evidence(True, "code")
        if pointed and c.value_object.search(clause):
            return Evidence(True, "value")
    for clause in clauses(question):
        if c.trouble.search(clause):
            continue
        if exprs and c.value_ask.search(clause) and any(_mentions(clause, e) for e in exprs):
            return Evidence(True, "expression")
        if parts and c.produce.search(clause) and any(_mentions(clause, p) for p in parts):
            return Evidence(True, "part")
    trouble = c.trouble.search(question) is not None or explained
    if (
        not trouble
        and c.do_for_me.search(question)
        and (
            c.pointer.search(question) is not None
            or any(_mentions(question, e) for e in exprs)
            or (about_course is not None and about_course())
        )
    ):
        return Evidence(True, "do-for-me")
    return Evidence(False, "explanatory" if trouble else "")


_QUESTION_RE = re.compile(r"[?？]\s*$|吗\s*[?？]?\s*$")
_MINE_RE = re.compile(r"\b(my|mine|our|i\s+wrote|i'?ve\s+written)\b|我的|我写的", re.IGNORECASE)
"""The learner's own solution: a question about it is about their attempt, not a request."""


def _asked_clauses(question: str) -> list[str]:
    """The clauses of ``question``, each with the mark that ended it (``clauses`` drops it)."""
    return [c.strip() for c in re.findall(r"[^,;!?，；！？。.\n]+[?？]?", question) if c.strip()]


_NEGATION_RE = re.compile(
    r"\b(doesn'?t|does\s+not|don'?t|do\s+not|didn'?t|did\s+not|can'?t|cannot|won'?t|never|no)"
    r"\s+(\w+\s+)?$|(?<![能可是要会有])(不能|无法|没有|不|没)$",
    re.IGNORECASE,
)


def _negated(ask: re.Pattern[str], clause: str) -> bool:
    """Whether ``clause`` denies an ask ("autograd doesn't provide a one-shot solution")."""
    return any(_NEGATION_RE.search(clause[: m.start()]) for m in ask.finditer(clause))


def _asks(ask: re.Pattern[str], clause: str) -> bool:
    """Whether ``clause`` asks to be handed something: an ask that is not negated ("autograd
    doesn't provide a one-shot solution" says what a library lacks, it asks for nothing)."""
    return any(
        _NEGATION_RE.search(clause[: m.start()]) is None for m in ask.finditer(clause)
    )


def points_at_step(question: str) -> bool:
    """Whether ``question`` points at the exercise itself ("this step", "这道题")."""
    return _compiled().pointer.search(question) is not None


def asks_for_solution(question: str, **options: Any) -> bool:
    """Whether ``question`` asks for the answer (``options``: :func:`detect`'s)."""
    return detect(question, **options).request
