"""Retrieval: BM25 over passages, with query-side typo correction and synonyms.

A passage is indexed in both languages at once, so a Chinese question finds the Chinese half
of a passage and an English one the English half, and code names match in either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tutor.chat.bm25 import BM25
from tutor.chat.models import Glossary, Passage
from tutor.chat.spelling import Speller
from tutor.chat.tokens import identifiers, tokenize

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SOURCE_WEIGHT = {"glossary": 1.0, "lesson": 1.0, "catalog": 0.9}
"""Catalog entries are about errors; slightly below concept text when both fit."""
TITLE_REPEAT = 2
"""A passage's title is indexed this many times: the title says what the passage is about."""


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float


class Retriever:
    def __init__(self, passages: Sequence[Passage], glossary: Glossary):
        self.passages = list(passages)
        self.glossary = glossary
        self.joinable = {
            t.lower().lstrip(".") for e in glossary.entries for t in e.terms if "_" in t
        } | {w for w in glossary.topic_words if "_" in w}
        docs = [self._doc_tokens(p) for p in self.passages]
        self.index = BM25(docs)
        corpus_words = {w.lower() for p in self.passages for w in _WORD_RE.findall(_raw(p))}
        targets = {
            part
            for e in glossary.entries
            for t in e.terms
            for part in t.lower().split(".")
            if len(part) >= 4
        } | {w for w in glossary.topic_words if w.isascii() and " " not in w}
        self.speller = Speller(targets, corpus_words)
        self.topic_tokens = {tok for word in glossary.topic_words for tok in self.tokens(word)}

    def _doc_tokens(self, passage: Passage) -> list[str]:
        title = f"{passage.title.en} {passage.title.zh} "
        text = title * TITLE_REPEAT + f"{passage.text.en} {passage.text.zh} {passage.keywords}"
        return tokenize(text, joinable=self.joinable)

    def correct(self, question: str) -> str:
        """The question with misspelt API names and words fixed and synonyms mapped."""

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            parts = word.split(".")
            fixed = [self.speller.correct(p) if len(p) >= 5 else p for p in parts]
            out = ".".join(fixed)
            return self.glossary.synonyms.get(out.lower(), out)

        corrected = re.sub(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", fix, question)
        for word, replacement in self.glossary.synonyms.items():
            if not word.isascii() and word in corrected:
                corrected = corrected.replace(word, f"{word} {replacement}")
        return corrected

    def tokens(self, text: str) -> list[str]:
        return tokenize(text, joinable=self.joinable)

    def search(
        self, question: str, *, limit: int = 8, exclude: frozenset[str] = frozenset()
    ) -> list[Hit]:
        query = self.tokens(self.correct(question))
        scores = self.index.scores(query)
        hits = [
            Hit(self.passages[i], s * SOURCE_WEIGHT[self.passages[i].source])
            for i, s in scores.items()
            if self.passages[i].id not in exclude
        ]
        hits.sort(key=lambda h: (-h.score, h.passage.id))
        return hits[:limit]

    def on_topic(self, question: str) -> bool:
        """Whether the question uses any autograd/PyTorch vocabulary (after corrections)."""
        corrected = self.correct(question)
        if set(self.tokens(corrected)) & self.topic_tokens:
            return True
        known_terms = {t.lower() for e in self.glossary.entries for t in e.terms if len(t) > 3}
        return any(i.lower() in known_terms or "." in i for i in identifiers(corrected))


def rank_lessons(hits: Sequence[Hit]) -> list[str]:
    """Lesson ids by their best passage's score, best first."""
    best: dict[str, float] = {}
    for hit in hits:
        lesson = hit.passage.lesson_id
        if lesson and hit.score > best.get(lesson, 0.0):
            best[lesson] = hit.score
    return sorted(best, key=lambda k: -best[k])


def _raw(passage: Passage) -> str:
    return " ".join([passage.title.en, passage.text.en, passage.keywords, passage.code or ""])
