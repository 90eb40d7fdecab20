"""Symptom questions ("x.grad is None", "the grad keeps growing"): recognised from how
learners describe them and answered by their likely causes, each with the lesson for it.

The data is ``symptoms.yaml``; a cause points at a passage (a diagnosis catalog entry, whose
run-independent summary explains it, or a glossary entry). Causes the question names an
ingredient of ("intermediate", "detach", "no_grad") come first; the rest keep the file's
order, the usual one.

Records, not pydantic models (see :mod:`tutor.records`): pydantic validates the file
(:func:`load_symptoms`); ``tutor ask`` reads the bundled symptoms, resolved against their
passages, from the cache (:func:`bundled_symptoms`) without importing it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tutor import records
from tutor.chat.catalog_location import catalog_path
from tutor.data_cache import read_data
from tutor.i18n import BiText, Text
from tutor.records import Record

if TYPE_CHECKING:  # the chat's models import pydantic: a question from the shell needs none
    from tutor.chat.models import Passage

PATH = Path(__file__).with_name("symptoms.yaml")
_LESSON_REF = {"pattern": r"^[a-z0-9-]+/[a-z0-9-]+$"}


@dataclass(frozen=True)
class Patterns(Record):
    en: list[str] = field(default_factory=list)
    zh: list[str] = field(default_factory=list)

    def compiled(self) -> re.Pattern[str] | None:
        parts = [*self.en, *self.zh]
        if not parts:
            return None
        return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


@dataclass(frozen=True)
class Remedy(Record):
    """A cause one lesson explains and another teaches the way around (a non-leaf's
    ``.grad``: the graph says why it is None, backward how to keep it). Both are named; the
    remedy's lesson comes first when the question asks what to do (``asks``)."""

    lesson: str = field(metadata=_LESSON_REF)
    asks: Patterns


@dataclass(frozen=True, kw_only=True)
class Cause(Record):
    ref: str = field(metadata={
        "pattern": r"^(catalog|glossary):[a-z0-9-]+$", "description": "A passage id."
    })
    title: BiText | None = field(
        default=None, metadata={"description": "When the passage's title is about a run."}
    )
    text: BiText | None = field(
        default=None, metadata={"description": "When the passage's text is about more."}
    )
    lesson: str | None = field(
        default=None, metadata={**_LESSON_REF, "description": "Overrides the passage's lesson."}
    )
    evidence: Patterns = field(default_factory=Patterns)
    remedy: Remedy | None = field(default=None, metadata={
        "description": "Where another lesson teaches what to do about this cause."
    })


@dataclass(frozen=True)
class Symptom(Record):
    id: str
    title: BiText
    says: Patterns
    causes: list[Cause] = field(metadata={"min_length": 1})


@dataclass(frozen=True)
class Symptoms(Record):
    symptoms: list[Symptom]

    def resolved(self, passages: Mapping[str, Passage]) -> Symptoms:
        """The symptoms with each cause's title, text and lesson read from its passage where
        the cause does not give its own (the passage's summary, the lesson that teaches it);
        a cause whose passage is not in ``passages`` (no catalog) is left out, and a symptom
        left with none (not answerable)."""
        out = []
        for symptom in self.symptoms:
            causes = [c for cause in symptom.causes if (c := _resolved(cause, passages))]
            if causes:
                out.append(symptom.model_copy(update={"causes": causes}))
        return Symptoms(out)


def _resolved(cause: Cause, passages: Mapping[str, Passage]) -> Cause | None:
    passage = passages.get(cause.ref)
    if passage is None:
        return None
    lesson = cause.lesson or (
        f"{passage.lesson_id}/{passage.step_id}" if passage.step_id else passage.lesson_id
    )
    if not lesson:
        return None
    return cause.model_copy(update={
        "title": cause.title or passage.title,
        "text": cause.text or _first_block(passage.text),
        "lesson": lesson,
    })


@lru_cache(maxsize=1)
def load_symptoms(path: Path = PATH) -> Symptoms:
    """symptoms.yaml, validated (pydantic)."""
    return Symptoms.model_validate(read_data(path))


def _bundled_sources() -> list[Path]:
    """What the bundled symptoms' resolved causes are made of: the symptoms, the passages
    of the glossary and the diagnosis catalog they name, and the code that reads them."""
    here = Path(__file__).parent
    catalog = catalog_path()
    code = [Path(__file__), here / "passages.py", here / "models.py", Path(records.__file__)]
    data = [PATH, here / "glossary.yaml", *([catalog] if catalog else [])]
    return [*data, *code, here.parent / "i18n.py"]


@lru_cache(maxsize=1)
def bundled_symptoms() -> Symptoms:
    """symptoms.yaml resolved against the bundled glossary and diagnosis catalog (what the
    Tutor's index holds of them): kept under the cache dir as the records' JSON, keyed by
    the sha256 of its sources, so that `tutor ask` answers a symptom question without
    pydantic, the catalog or the retrieval index."""
    from tutor.paths import cache_root, write_cache_file

    digest = hashlib.sha256()
    for source in _bundled_sources():
        try:
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
        except OSError:
            digest.update(source.name.encode() + b"\0<missing>")
    entry = cache_root() / "chat" / f"symptoms-{digest.hexdigest()[:32]}.json"
    try:
        cached = records.from_json(entry.read_bytes())
        if isinstance(cached, Symptoms):
            return cached
    except (OSError, ValueError, KeyError, TypeError):
        pass
    from tutor.chat.passages import (
        catalog_passages,
        glossary_passages,
        load_catalog_entries,
        load_glossary,
    )

    passages = glossary_passages(load_glossary()) + catalog_passages(load_catalog_entries())
    symptoms = load_symptoms().resolved({p.id: p for p in passages})
    write_cache_file(entry, records.to_json(symptoms))
    return symptoms


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
    """Recognises symptoms in a question; ``symptoms`` are :meth:`Symptoms.resolved`."""

    def __init__(self, symptoms: Symptoms):
        self.symptoms = symptoms.symptoms
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

    def describes(self, question: str) -> bool:
        """Whether ``question``, as written, says one of the symptoms."""
        return any(
            (says := self._pattern(symptom, -1, "says")) is not None and says.search(question)
            for symptom in self.symptoms
        )

    def match(self, question: str) -> Diagnosed | None:
        """The first symptom ``question`` describes, with its causes ordered for it."""
        question = values_as_numbers(question)
        for symptom in self.symptoms:
            says = self._pattern(symptom, -1, "says")
            if says is None or not says.search(question):
                continue
            causes = [self._likely(symptom, i, c, question) for i, c in enumerate(symptom.causes)]
            causes.sort(key=lambda c: not c.evidenced)  # stable: the file's order otherwise
            return Diagnosed(symptom, causes)
        return None

    def _likely(self, symptom: Symptom, i: int, cause: Cause, question: str) -> Likely:
        ref = cause.lesson or ""
        evidence = self._pattern(symptom, i, "evidence")
        also = None
        if cause.remedy is not None:
            asks = self._pattern(symptom, i, "asks")
            also = cause.remedy.lesson
            if asks is not None and asks.search(question):  # what to do: the remedy first
                ref, also = also, ref
        if cause.title is None or cause.text is None:
            raise ValueError(f"{symptom.id}: {cause.ref} is not resolved (Symptoms.resolved)")
        return Likely(
            title=cause.title,
            text=cause.text,
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
