"""Symptom questions ("x.grad is None", "the grad keeps growing"): recognised from how
learners describe them and answered by their likely causes, each with the lesson for it.

The data is ``symptoms.yaml``; a cause points at a passage (a diagnosis catalog entry, whose
run-independent summary explains it, or a glossary entry). Causes the question names an
ingredient of ("intermediate", "detach", "no_grad") come first; the rest keep the file's
order, the usual one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tutor.chat.models import Passage
from tutor.data_cache import read_data
from tutor.i18n import BiText, Text

PATH = Path(__file__).with_name("symptoms.yaml")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Patterns(_Strict):
    en: list[str] = Field(default_factory=list)
    zh: list[str] = Field(default_factory=list)

    def compiled(self) -> re.Pattern[str] | None:
        parts = [*self.en, *self.zh]
        if not parts:
            return None
        return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


class Remedy(_Strict):
    """A cause one lesson explains and another teaches the way around (a non-leaf's
    ``.grad``: the graph says why it is None, backward how to keep it). Both are named; the
    remedy's lesson comes first when the question asks what to do (``asks``)."""

    lesson: str = Field(pattern=r"^[a-z0-9-]+/[a-z0-9-]+$")
    asks: Patterns


class Cause(_Strict):
    ref: str = Field(pattern=r"^(catalog|glossary):[a-z0-9-]+$", description="A passage id.")
    title: BiText | None = Field(None, description="When the passage's title is about a run.")
    text: BiText | None = Field(None, description="When the passage's text is about more.")
    lesson: str | None = Field(
        None, pattern=r"^[a-z0-9-]+/[a-z0-9-]+$", description="Overrides the passage's lesson."
    )
    evidence: Patterns = Field(default_factory=Patterns)
    remedy: Remedy | None = Field(
        None, description="Where another lesson teaches what to do about this cause."
    )


class Symptom(_Strict):
    id: str
    title: BiText
    says: Patterns
    causes: list[Cause] = Field(min_length=1)


class Symptoms(_Strict):
    symptoms: list[Symptom]


@lru_cache(maxsize=1)
def load_symptoms(path: Path = PATH) -> Symptoms:
    return Symptoms.model_validate(read_data(path))


@dataclass(frozen=True)
class Likely:
    """One cause of a recognised symptom, resolved to its passage."""

    title: Text
    text: Text
    ref: str
    """LESSON/STEP to read."""
    source: str
    """The passage id ('catalog:grad-none')."""
    evidenced: bool
    also: str | None = None
    """A second LESSON/STEP to read for it (the other side of a :class:`Remedy`)."""


@dataclass(frozen=True)
class Diagnosed:
    symptom: Symptom
    causes: list[Likely]

    @property
    def lessons(self) -> list[str]:
        """The causes' lessons, most likely first, each once."""
        out: list[str] = []
        for cause in self.causes:
            for ref in (cause.ref, cause.also):
                lesson = (ref or "").partition("/")[0]
                if lesson and lesson not in out:
                    out.append(lesson)
        return out


class SymptomMatcher:
    """Recognises symptoms in a question; causes resolved against the index's passages."""

    def __init__(self, passages: Mapping[str, Passage], symptoms: Symptoms | None = None):
        self.symptoms = (symptoms or load_symptoms()).symptoms
        self.passages = passages
        # compiled when first read: a question reads the phrasings of the symptoms before the
        # one it describes and the causes of that one only (compiling all of them took about
        # a tenth of a shell question's time)
        self._compiled: dict[tuple[str, int, str], re.Pattern[str] | None] = {}

    def _pattern(self, symptom: Symptom, i: int, part: str) -> re.Pattern[str] | None:
        key = (symptom.id, i, part)
        if key not in self._compiled:
            if part == "says":
                patterns: Patterns | None = symptom.says
            elif part == "evidence":
                patterns = symptom.causes[i].evidence
            else:
                remedy = symptom.causes[i].remedy
                patterns = remedy.asks if remedy is not None else None
            self._compiled[key] = patterns.compiled() if patterns is not None else None
        return self._compiled[key]

    def match(self, question: str) -> Diagnosed | None:
        """The first symptom ``question`` describes, with its causes ordered for it."""
        question = values_as_numbers(question)
        for symptom in self.symptoms:
            says = self._pattern(symptom, -1, "says")
            if says is None or not says.search(question):
                continue
            causes = [
                cause
                for i, c in enumerate(symptom.causes)
                if (cause := self._resolve(symptom, i, c, question)) is not None
            ]
            if not causes:
                continue  # its passages are not in this index (no catalog): not answerable
            causes.sort(key=lambda c: not c.evidenced)  # stable: the file's order otherwise
            return Diagnosed(symptom, causes)
        return None

    def _resolve(self, symptom: Symptom, i: int, cause: Cause, question: str) -> Likely | None:
        passage = self.passages.get(cause.ref)
        if passage is None:
            return None
        ref = cause.lesson or (
            f"{passage.lesson_id}/{passage.step_id}" if passage.step_id else passage.lesson_id
        )
        if not ref:
            return None
        evidence = self._pattern(symptom, i, "evidence")
        also = None
        if cause.remedy is not None:
            asks = self._pattern(symptom, i, "asks")
            also = cause.remedy.lesson
            if asks is not None and asks.search(question):  # what to do: the remedy first
                ref, also = also, ref
        return Likely(
            title=cause.title or passage.title,
            text=cause.text or _first_block(passage.text),
            ref=ref,
            source=cause.ref,
            evidenced=bool(evidence and evidence.search(question)),
            also=also,
        )


_NUMBER = r"[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?"
_TENSOR_RE = re.compile(rf"(?<![.\w])tensor\(\s*\[*\s*({_NUMBER})[^)]*\)")
"""A printed tensor ("tensor([2., 2.])"), not a call that makes one ("torch.tensor(...)")."""
_LIST_RE = re.compile(rf"\[+\s*({_NUMBER})(?:\s*,\s*\[*\s*{_NUMBER}\s*\]*)*\s*,?\s*\]+")


def values_as_numbers(question: str) -> str:
    """``question`` with each printed tensor or list of numbers ("tensor([2., 2.])",
    "[4., 4.]") written as its first number: how a value changes from one run to the next
    reads the same whether the learner typed numbers or pasted what torch printed."""
    return _LIST_RE.sub(r"\1", _TENSOR_RE.sub(r"\1", question))


def _first_block(text: Text) -> Text:
    """A catalog passage is its summary, then its fix: the summary says the cause."""
    return Text(en=text.en.split("\n\n")[0].strip(), zh=text.zh.split("\n\n")[0].strip())
