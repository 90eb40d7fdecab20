"""Which exercise a question is about, from the code or the exercise text it pastes.

A learner who asks "just give me the answer" from the shell (``tutor ask``, no ``--step``)
often pastes the exercise's starter code or its title. Matching the pasted statements against
each step's starter code (spaces and comments ignored), and the question's words against each
step's title, finds the step, so the answer can be that step's next hint.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tutor.chat.tokens import tokenize
from tutor.course.models import Course

_COMMENT_RE = re.compile(r"#.*$", re.MULTILINE)
_SPACE_RE = re.compile(r"\s+")
MIN_STATEMENT = 8
"""Shorter statements (``import torch``, ``x = 1``) are in every exercise."""
MIN_SCORE = 1.0
_INLINE_CODE_RE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
"""Code quoted inline (``value = x.detach()``): what a question pastes between backticks."""
COVERED = 0.5
"""Share of a pasted program's statements that must be an exercise's for it to be that
exercise's code."""
MIN_PROGRAM = 3
"""Statements from which pasted code is a program of the learner's whose exercise is asked."""
NEAR_SCORE = 0.5
"""Below this an exercise is not near a question at all (a word or two in common)."""
DEFINED_WEIGHT = 2.0
MIN_NAME = 4
TORCH_CALLS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})
"""Methods torch calls on a learner's class: defining one names no exercise."""
_DEFINED_RE = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)
_NAME_RE = re.compile(r"[A-Za-z_]\w*")
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
        self._defined: dict[tuple[str, str], set[str]] = {}
        """The functions and classes each exercise has the learner write (``vjp_by_backward``)."""
        self._prompts: dict[tuple[str, str], frozenset[str]] = {}
        self._code: dict[tuple[str, str], set[str]] = {}
        """The statements of each exercise: its starter and the code its prompt quotes."""
        self._share: dict[str, int] = {}
        self._course: Course | None = course
        """Indexed at the first question that needs it: most questions name no exercise, and
        indexing every starter costs a question from the shell ~35 ms."""

    def _index(self) -> None:
        course, self._course = self._course, None
        if course is None:
            return
        for lesson in course.lessons:
            for step in lesson.steps:
                if not getattr(step, "hints", None):
                    continue
                starter = str(getattr(step, "starter", "") or getattr(step, "code", "") or "")
                title = (step.title.en.lower(), step.title.zh)
                words = frozenset(tokenize(f"{step.title.en} {step.title.zh}"))
                self._steps.append((lesson.id, step.id, _statements(starter), words, title))
                self._short[lesson.id, step.id] = _statements(starter, 4) - _statements(starter)
                self._defined[lesson.id, step.id] = {
                    n for n in _DEFINED_RE.findall(starter) if len(n) >= MIN_NAME
                }
                prompt = getattr(step, "prompt", None)
                self._prompts[lesson.id, step.id] = frozenset(
                    tokenize(f"{prompt.en} {prompt.zh}") if prompt is not None else ()
                )
                quoted = _INLINE_CODE_RE.findall(f"{prompt.en}\n{prompt.zh}") if prompt else []
                self._code[lesson.id, step.id] = _statements(starter).union(
                    *(_statements(q) for q in quoted))
        # a statement several exercises start from says less about which one it is
        for *_, statements, _words, _title in self._steps:
            for statement in statements:
                self._share[statement] = self._share.get(statement, 0) + 1
        # a name one exercise alone defines names it (``clipped_grad``); ``forward`` or
        # ``backward``, which torch calls and several exercises define, names none
        defined = Counter(n for names in self._defined.values() for n in names)
        for key, names in self._defined.items():
            self._defined[key] = {n for n in names if defined[n] == 1 and n not in TORCH_CALLS}

    def find(self, question: str) -> StepRef | None:
        """The step the question is about, or None when it names none clearly."""
        ranked = self.ranked(question)
        if not ranked:
            return None
        best = ranked[0]
        second = ranked[1].score if len(ranked) > 1 else 0.0
        if best.score < MIN_SCORE or best.score < second * 1.25:
            return None
        return best

    def covers(self, question: str, ref: StepRef) -> bool:
        """Whether the code ``question`` pastes is mostly ``ref``'s exercise (at least
        :data:`COVERED` of its statements are the exercise's), or it pastes none: a learner's
        own program that shares a line or two with an exercise (``with torch.no_grad():``,
        ``loss.backward()``) is not that exercise."""
        from tutor.chat.snippets import pasted_blocks

        pasted: set[str] = set()
        for block in [*pasted_blocks(question, inline=False),
                      *_INLINE_CODE_RE.findall(question)]:
            pasted |= _statements(block)
        if len(pasted) < MIN_PROGRAM:
            return True  # a fragment or two: what names an exercise, not a program
        self._index()
        mine = self._code.get((ref.lesson_id, ref.step_id), set())
        # a fragment of an exercise's line counts (``torch.tensor([0.5, -0.3])`` of ``w = ...``)
        ours = [p for p in pasted if any(p in line or line in p for line in mine)]
        return len(ours) >= COVERED * len(pasted)

    def closest(self, question: str, most: int = 3) -> list[StepRef]:
        """The exercises nearest to ``question`` (by its code, names and words), best first:
        those scoring at least half the best's, ``most`` of them; none when nothing is near."""
        ranked = [r for r in self.ranked(question, prompts=True) if r.score >= NEAR_SCORE]
        if not ranked:
            return []
        return [r for r in ranked if r.score >= ranked[0].score / 2][:most]

    def ranked(self, question: str, *, prompts: bool = False) -> list[StepRef]:
        """Every exercise with its score for ``question``, best first. ``prompts``: the words
        it shares with each exercise's prompt count too (weak evidence: to rank the nearest
        ones, not to name one)."""
        self._index()
        pasted = _statements(question)
        short = _statements(question, 4) - pasted
        flat = "".join(pasted)
        asked = frozenset(tokenize(question))
        quoted = [frozenset(tokenize(q)) for q in _QUOTED_RE.findall(question)]
        lowered = question.lower()
        named = set(_NAME_RE.findall(question))
        out: list[StepRef] = []
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
            # a function or class the exercise has the learner write, named in the question
            score += DEFINED_WEIGHT * len(self._defined[lesson_id, step_id] & named)
            if prompts and asked:
                prompt = self._prompts[lesson_id, step_id]
                score += len(prompt & asked) / len(asked)
            out.append(StepRef(lesson_id, step_id, score))
        return sorted(out, key=lambda r: -r.score)
