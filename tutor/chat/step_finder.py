"""Which exercise a question is about, from the code or the exercise text it pastes.

A learner who asks "just give me the answer" from the shell (``tutor ask``, no ``--step``)
often pastes the exercise's starter code or its title. Matching the pasted statements against
each step's starter code (spaces and comments ignored), and the question's words against each
step's title, finds the step, so the answer can be that step's next hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor.chat.tokens import tokenize
from tutor.course.models import Course

_COMMENT_RE = re.compile(r"#.*$", re.MULTILINE)
_SPACE_RE = re.compile(r"\s+")
MIN_STATEMENT = 8
"""Shorter statements (``import torch``, ``x = 1``) are in every exercise."""
MIN_SCORE = 1.0
_QUOTED_RE = re.compile(r"[「“\"'『](.{4,60}?)[」”\"'』]")
"""A title quoted in the question ("the 「修复：第二次反向传播」 exercise")."""


def _statements(code: str, shortest: int = MIN_STATEMENT) -> set[str]:
    """Code's statements without spaces or comments; ``;`` and newlines both separate them
    (a learner pasting on one line ends a comment with ``;``)."""
    out = set()
    for part in re.split(r"[\n;]", code):
        norm = _SPACE_RE.sub("", _COMMENT_RE.sub("", part)).rstrip(",")
        if len(norm) >= shortest and not norm.startswith(("import", "from")):
            out.add(norm)
    return out


@dataclass(frozen=True)
class StepRef:
    lesson_id: str
    step_id: str
    score: float

    @property
    def ref(self) -> str:
        return f"{self.lesson_id}/{self.step_id}"


class StepFinder:
    """Finds the exercise (a step with hints) a question pastes or names."""

    def __init__(self, course: Course):
        self._steps: list[tuple[str, str, set[str], frozenset[str], tuple[str, str]]] = []
        self._short: dict[tuple[str, str], set[str]] = {}
        """Each step's short statements (``y+=1``): they tell apart exercises that share the
        long ones, and prove nothing alone."""
        for lesson in course.lessons:
            for step in lesson.steps:
                if not getattr(step, "hints", None):
                    continue
                starter = str(getattr(step, "starter", "") or getattr(step, "code", "") or "")
                title = (step.title.en.lower(), step.title.zh)
                words = frozenset(tokenize(f"{step.title.en} {step.title.zh}"))
                self._steps.append((lesson.id, step.id, _statements(starter), words, title))
                self._short[lesson.id, step.id] = _statements(starter, 4) - _statements(starter)
        # a statement several exercises start from says less about which one it is
        self._share: dict[str, int] = {}
        for *_, statements, _words, _title in self._steps:
            for statement in statements:
                self._share[statement] = self._share.get(statement, 0) + 1

    def find(self, question: str) -> StepRef | None:
        """The step the question is about, or None when it names none clearly."""
        pasted = _statements(question)
        short = _statements(question, 4) - pasted
        flat = "".join(pasted)
        asked = frozenset(tokenize(question))
        quoted = [frozenset(tokenize(q)) for q in _QUOTED_RE.findall(question)]
        lowered = question.lower()
        best: StepRef | None = None
        second = 0.0
        for lesson_id, step_id, statements, words, (title_en, title_zh) in self._steps:
            # a statement counts when pasted whole, or when it appears inside the pasted text
            found = [s for s in statements if s in pasted or s in flat]
            score = sum(1 / self._share[s] for s in found)
            if found:  # of two exercises with the same lines, the one pasted whole fits best
                score += 0.5 * len(found) / len(statements)
                score += 0.5 * len(short & self._short[lesson_id, step_id])
            if title_en in lowered or title_zh in question:
                score += 2.0
            elif words:
                score += 1.5 * len(words & asked) / len(words)
                # a title quoted in other words: most of the quote's words are the title's
                share = max((len(q & words) / len(q) for q in quoted if q), default=0.0)
                if share >= 0.6:
                    score += 1.5 * share
            if best is None or score > best.score:
                second = best.score if best else 0.0
                best = StepRef(lesson_id, step_id, score)
            elif score > second:
                second = score
        if best is None or best.score < MIN_SCORE or best.score < second * 1.25:
            return None
        return best
