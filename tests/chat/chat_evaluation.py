"""Scoring the tutor chat on question sets: for the tests (floors) and benchmarks/bench_chat.py
(figures). Not part of the package: only tests and the benchmark use it.

Two formats:

- the older regression sets (``questions.yaml``, ``heldout*.yaml``): retrieval top-1/top-3,
  expected words, solution requests refused with a hint, off-topic declined, latency;
- the learner format (``learner/*.yaml`` and any file like it): each answer graded with the
  written rubric below, one grade an answer.

The rubric (automatic; ``bench_chat.py --dump`` writes the answers for a blind judge):

- leak: the answer shows the solution of a step (its reference solution's lines or expected
  values; for a solution request, of the step it asks about).
- wrong: off-topic answered as if it were about autograd; a solution request answered with
  another step's hint; an answer that names none of the facts a correct answer needs (the
  item's ``must``) and sends the learner to another lesson than the question's; an answer
  that names a variable in prose that is neither the learner's nor in its own example.
- poor: on-topic declined or a canned refusal with no hint; an answer in the other language;
  a correct lesson without the facts a correct answer needs.
- ok: correct (every ``must`` fact, the question's language) but generic: the lesson or card
  for another part of the course than the question's, an unsure preamble, or the wrong shape
  (a can-I / is-it-safe question not answered yes or no first, a comparison without both
  sides).
- good: answers this question correctly, in its language and shape: off-topic declined, a
  solution request answered with its own step's next hint and a guiding question.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.chat.context import ChatContext
from tutor.chat.guardrails import find_leaks, step_secrets
from tutor.chat.models import Answer
from tutor.chat.tutor import Tutor
from tutor.course.models import CodeStep, Course, FixStep
from tutor.yaml_read import load

OFF_TOPIC = "off-topic"
SOLUTION_REQUEST = "solution-request"


def read_data(path: Path) -> Any:
    return load(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the older regression sets


class QuestionCase(BaseModel):
    # an expected word written as a bare YAML number (expect: [400]) is still a word
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    q: str
    topic: str
    expect: list[str] = Field(default_factory=list)
    step: str | None = None


class CaseResult(BaseModel):
    case: QuestionCase
    answer: Answer
    top1: bool
    top3: bool
    words: bool | None
    leaked: bool
    ms: float


class Report(BaseModel):
    results: list[CaseResult]

    def _share(self, values: Sequence[bool]) -> float:
        return sum(values) / len(values) if values else 0.0

    @property
    def top1(self) -> float:
        return self._share([r.top1 for r in self.results])

    @property
    def top3(self) -> float:
        return self._share([r.top3 for r in self.results])

    @property
    def words(self) -> float:
        return self._share([r.words for r in self.results if r.words is not None])

    def subset(self, topic: str) -> list[CaseResult]:
        return [r for r in self.results if r.case.topic == topic]

    @property
    def refused_with_hint(self) -> tuple[int, int]:
        cases = self.subset(SOLUTION_REQUEST)
        return sum(r.top1 for r in cases), len(cases)

    @property
    def leaks(self) -> int:
        return sum(r.leaked for r in self.results)

    def latency(self, q: float) -> float:
        return percentile([r.ms for r in self.results], q)

    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.top1 or r.words is False]


def percentile(values: Sequence[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(sorted(values), n=100, method="inclusive")[int(q * 100) - 1]


def load_cases(path: Path) -> list[QuestionCase]:
    return [QuestionCase.model_validate(item) for item in read_data(path)]


def _exercise_ref(course: Course, wanted: str | None) -> str | None:
    """``wanted`` if the course has it, else its first exercise with hints."""
    if wanted:
        try:
            course.find(wanted)
            return wanted
        except KeyError:
            pass
    for lesson in course.lessons:
        for step in lesson.steps:
            if isinstance(step, (CodeStep, FixStep)) and step.hints:
                return f"{lesson.id}/{step.id}"
    return None


def evaluate(tutor: Tutor, cases: Sequence[QuestionCase]) -> Report:
    results = []
    for case in cases:
        context = None
        secrets = None
        if case.topic == SOLUTION_REQUEST:
            ref = _exercise_ref(tutor.course, case.step)
            if ref:
                lesson_id, _, step_id = ref.partition("/")
                context = ChatContext(lesson_id=lesson_id, step_id=step_id)
                secrets = step_secrets(tutor.course.find(ref)[1])
        start = time.perf_counter()
        answer = tutor.ask(case.q, context=context)
        ms = (time.perf_counter() - start) * 1000
        if case.topic == OFF_TOPIC:
            top1 = top3 = answer.kind == "off_topic"
        elif case.topic == SOLUTION_REQUEST:
            top1 = top3 = answer.refused and answer.hint_level is not None
        else:
            top1 = bool(answer.lessons) and answer.lessons[0] == case.topic
            top3 = case.topic in answer.lessons[:3]
        text = answer.text.lower()
        words = all(w.lower() in text for w in case.expect) if case.expect else None
        leaked = bool(secrets and find_leaks(answer.text, secrets).leaked)
        results.append(
            CaseResult(
                case=case, answer=answer, top1=top1, top3=top3, words=words, leaked=leaked, ms=ms
            )
        )
    return Report(results=results)


# ------------------------------------------------------------------ the learner format

Grade = Literal["good", "ok", "poor", "wrong", "leak"]
GRADES: tuple[Grade, ...] = ("good", "ok", "poor", "wrong", "leak")
_VERDICTS = ("Yes", "No", "It depends", "是的", "不行", "不安全", "安全", "要看情况", "可以", "不")


class LearnerItem(BaseModel):
    """One question of a learner set (tests/chat/learner/*.yaml)."""

    # other fields a set may carry (notes, judges' marks) are not the rubric's business
    model_config = ConfigDict(extra="ignore", frozen=True, coerce_numbers_to_str=True)

    id: str
    lang: Literal["en", "zh"]
    kind: str
    q: str
    topic: str | None = None
    must: list[str] = Field(default_factory=list)
    step: str | None = None
    source: str = ""
    origin: str = ""


def load_learner(path: Path) -> list[LearnerItem]:
    return [LearnerItem.model_validate(item) for item in read_data(path)]


def _has(text: str, alternatives: str) -> bool:
    return any(a.lower() in text.lower() for a in alternatives.split("|"))


def in_language(text: str, lang: str) -> bool:
    """Whether the prose of ``text`` is in ``lang``: code, and the course's titles quoted in
    “…” (an English title may name 报错), are not prose."""
    prose = re.sub(r"```.*?```|`[^`]*`|“[^”]*”", "", text, flags=re.DOTALL)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", prose))
    if lang == "zh":
        return cjk >= 8
    return cjk == 0


_SPAN_RE = re.compile(r"`([A-Za-z_]\w*)(?:\.|\(|\[|`)")
_FENCE_RE = re.compile(r"```.*?```", re.DOTALL)
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_MODULES = frozenset({"nn", "F", "np", "os", "re", "pd"})
"""Short names that are modules (torch.nn as nn), not a learner's variables."""


def invented_names(text: str, question: str, known: frozenset[str]) -> list[str]:
    """Variables the answer's prose names in code (``z.grad``, ```w```) that are neither in
    the question nor defined by the answer's own example nor ``known`` (API and course
    names): the answer is about a variable the learner does not have."""
    examples = " ".join(_FENCE_RE.findall(text))
    prose = _FENCE_RE.sub(" ", text)
    mine = set(_IDENT_RE.findall(question)) | set(_IDENT_RE.findall(examples))
    out = []
    for name in _SPAN_RE.findall(prose):
        if len(name) <= 2 and name not in mine | known | _MODULES:
            out.append(name)
    return sorted(set(out))


def grade(item: LearnerItem, answer: Answer, course: Course) -> tuple[Grade, str]:
    """(grade, why) of one answer, by the rubric in the module's docstring."""
    text = answer.text
    if item.step:
        _, step = course.find(item.step)
        if find_leaks(text, step_secrets(step), question=item.q).leaked:
            return "leak", f"shows {item.step}'s solution"
    if item.kind == "off_topic":
        return ("good", "declined") if answer.kind == "off_topic" else ("wrong", "answered")
    if item.kind == "solution":
        if answer.kind != "hint" or answer.hint_level is None:
            return "poor", "no hint"
        if answer.sources != [item.step]:
            return "wrong", f"hint for {answer.sources}"
        if "?" not in text and "？" not in text:
            return "ok", "hint without a guiding question"
        return "good", "its step's hint"
    if answer.kind == "off_topic":
        return "poor", "declined"
    known = frozenset().union(*(lesson_names(course, lid) for lid in answer.lessons))
    invented = invented_names(text, item.q, known)
    if invented:
        return "wrong", f"names {invented}, not the learner's"
    facts = all(_has(text, m) for m in item.must)
    on_lesson = item.topic in (answer.lessons or [])[:2]
    if not in_language(text, item.lang):
        return "poor", "other language"
    if not facts:
        return ("poor", "facts missing") if on_lesson else ("wrong", "facts missing, other lesson")
    if item.kind in ("can", "safe") and not text.startswith(_VERDICTS):
        return "ok", "no yes/no first"
    if item.kind == "compare" and sum(line.startswith("- ") for line in text.splitlines()) < 2:
        return "ok", "one side"
    if text.startswith(("I'm not sure", "我不太确定")) or "not sure" in text[:80]:
        return "ok", "unsure"
    if not on_lesson:
        return "ok", f"lessons {answer.lessons[:2]}"
    return "good", "this question, its language and shape"


def lesson_names(course: Course, lesson_id: str) -> frozenset[str]:
    """Names the lesson shows (its code's variables): an answer that sends the learner there
    may use them."""
    names: set[str] = set()
    try:
        lesson = course.lesson(lesson_id)
    except KeyError:
        return frozenset()
    for step in lesson.steps:
        for attr in ("starter", "code"):
            value = getattr(step, attr, None)
            if isinstance(value, str):
                names.update(_IDENT_RE.findall(value))
        for attr in ("body", "prompt"):
            text = getattr(step, attr, None)
            if text is not None:
                names.update(_IDENT_RE.findall(" ".join(re.findall(r"`[^`]*`", text.en))))
                for fenced in _FENCE_RE.findall(text.en):
                    names.update(_IDENT_RE.findall(fenced))
    return frozenset(names)
