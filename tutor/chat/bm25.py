"""A small BM25 (Okapi) index over token lists, with an inverted index so a query only
touches the documents that share a term with it."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence


class BM25:
    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self.size = len(documents)
        self.lengths = [len(doc) for doc in documents]
        self.avg_length = (sum(self.lengths) / self.size) if self.size else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for doc_id, doc in enumerate(documents):
            for term, freq in Counter(doc).items():
                self.postings[term].append((doc_id, freq))
        self.idf = {
            term: math.log(1 + (self.size - len(p) + 0.5) / (len(p) + 0.5))
            for term, p in self.postings.items()
        }

    @property
    def vocabulary(self) -> set[str]:
        return set(self.postings)

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Document id -> score, for documents with a positive score."""
        out: dict[int, float] = defaultdict(float)
        for term, qf in Counter(query).items():
            idf = self.idf.get(term)
            if idf is None:
                continue
            for doc_id, freq in self.postings[term]:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[doc_id] / self.avg_length)
                out[doc_id] += qf * idf * freq * (self.k1 + 1) / (freq + norm)
        return dict(out)
