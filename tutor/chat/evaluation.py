"""Scores the tutor on a set of learner questions: retrieval top-1/top-3, expected words,
solution requests refused with a hint, off-topic questions declined, latency.

Used by ``tests/chat`` (floors) and ``benchmarks/bench_chat.py`` (figures)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from ruamel.yaml import YAML

from tutor.chat.guardrails import find_leaks, step_secrets
from tutor.chat.models import Answer, ChatContext
from tutor.chat.tutor import Tutor
from tutor.course.models import CodeStep, Course, FixStep

OFF_TOPIC = "off-topic"
SOLUTION_REQUEST = "solution-request"


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
        times = sorted(r.ms for r in self.results)
        if not times:
            return 0.0
        return statistics.quantiles(times, n=100, method="inclusive")[int(q * 100) - 1]

    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.top1 or r.words is False]


def load_cases(path: Path) -> list[QuestionCase]:
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return [QuestionCase.model_validate(item) for item in data]


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
