"""The typo layer: a learner's ``requries_grad`` is read as ``requires_grad``."""

from __future__ import annotations

from collections.abc import Iterable


def edit_distance(a: str, b: str, *, limit: int = 3) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance; stops early past ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def allowed_distance(word: str) -> int:
    """Short words have many close neighbours, so they are trusted less."""
    if len(word) < 5:
        return 0
    return 1 if len(word) < 8 else 2


class Speller:
    """Corrects an unknown word to the closest ``target`` (API names and autograd words).

    Words in ``known`` (every word of the corpus) are left alone, so only misspellings move,
    and only towards the vocabulary of the topic, never towards arbitrary English.
    """

    def __init__(self, targets: Iterable[str], known: Iterable[str] = ()):
        self.targets = {t.lower() for t in targets if t.isascii()}
        self.known = self.targets | {k.lower() for k in known}
        self._by_length: dict[int, list[str]] = {}
        for term in sorted(self.targets):
            if len(term) >= 4:
                self._by_length.setdefault(len(term), []).append(term)

    def correct(self, token: str) -> str:
        token = token.lower()
        if token in self.known or not token.isascii():
            return token
        limit = allowed_distance(token)
        if limit == 0:
            return token
        best, best_distance = token, limit + 1
        for length in range(len(token) - limit, len(token) + limit + 1):
            for term in self._by_length.get(length, ()):
                d = edit_distance(token, term, limit=limit)
                if d < best_distance:
                    best, best_distance = term, d
        return best
