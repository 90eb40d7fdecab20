"""What a question asks for beyond its topic: something about the learner's own run, and
what kind of answer it wants (a definition, a reason, a procedure, an error
explained). Patterns live in ``intents.yaml``; whether it asks for the solution is
``solution_requests.py``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tutor.data_cache import read_data
from tutor.errors import TutorError

INTENTS_PATH = Path(__file__).with_name("intents.yaml")


@dataclass(frozen=True)
class QuestionKind:
    patterns: list[str]
    prefer: dict[str, float] = field(default_factory=dict)
    """Passage kind -> score multiplier."""
    whole_lessons: bool = False
    """The question is about everything at once: the lessons that gather the others (lower
    priors in concepts.yaml) compete at full weight."""


@dataclass(frozen=True)
class Intents:
    """The file's shape (plain dataclasses: a question from the shell reads it without
    pydantic; a wrong key is a TypeError, a wrong pattern a re.error, both said with the path)."""

    about_my_run: list[str]
    asks_about_error: list[str] = field(default_factory=list)
    asks_about_program: list[str] = field(default_factory=list)
    asks_loss_not_falling: list[str] = field(default_factory=list)
    tells_training_symptom: list[str] = field(default_factory=list)
    tells_unexpected_outcome: list[str] = field(default_factory=list)
    mentions_error: list[str] = field(default_factory=list)
    question_kinds: dict[str, QuestionKind] = field(default_factory=dict)


class _Compiled:
    def __init__(self, data: Intents):
        self.run = [re.compile(p, re.IGNORECASE) for p in data.about_my_run]
        self.error = [re.compile(p, re.IGNORECASE) for p in data.asks_about_error]
        self.program = [re.compile(p, re.IGNORECASE) for p in data.asks_about_program]
        self.loss_flat = [re.compile(p, re.IGNORECASE) for p in data.asks_loss_not_falling]
        self.training = [re.compile(p, re.IGNORECASE) for p in data.tells_training_symptom]
        self.unexpected = [re.compile(p, re.IGNORECASE) for p in data.tells_unexpected_outcome]
        self.errors = [re.compile(p, re.IGNORECASE) for p in data.mentions_error]
        self.kinds = {
            name: ([re.compile(p, re.IGNORECASE) for p in kind.patterns], kind.prefer)
            for name, kind in data.question_kinds.items()
        }
        self.whole = {name for name, kind in data.question_kinds.items() if kind.whole_lessons}


@lru_cache(maxsize=1)
def _compiled() -> _Compiled:
    try:
        raw = read_data(INTENTS_PATH)
        kinds = {name: QuestionKind(**kind) for name, kind in raw.pop("question_kinds", {}).items()}
        return _Compiled(Intents(**raw, question_kinds=kinds))
    except (TypeError, AttributeError, re.error) as exc:
        raise TutorError(f"{INTENTS_PATH}: cannot load the tutor's intents: {exc}") from exc


def about_my_run(question: str) -> bool:
    return any(p.search(question) for p in _compiled().run)


def asks_about_error(question: str) -> bool:
    """Whether ``question`` asks why something errors (it may or may not quote the error)."""
    return any(p.search(question) for p in _compiled().error)


def asks_about_program(question: str) -> bool:
    """Whether ``question`` asks what is wrong with a program, or whether it works ("can you
    spot the bug?", "my loss is not decreasing", "这段代码哪里错了")."""
    return any(p.search(question) for p in _compiled().program)


def mentions_error(question: str) -> bool:
    """Whether ``question`` speaks of an error being raised ("why does it throw?", "报错")."""
    return any(p.search(question) for p in _compiled().errors)


def asks_loss_not_falling(question: str) -> bool:
    """Whether ``question`` says the loss does not go down ("my loss is stuck", "loss 不下降")."""
    return any(p.search(question) for p in _compiled().loss_flat)


def tells_training_symptom(question: str) -> bool:
    """Whether ``question`` describes how its training behaves ("the generator is not
    learning", "the gradient norm keeps growing", "准确率一直不变"): its run's facts bear on it."""
    return asks_loss_not_falling(question) or any(
        p.search(question) for p in _compiled().training)


def tells_unexpected_outcome(question: str) -> bool:
    """Whether ``question`` says what its code did against the learner's expectation ("y.grad
    is None", "I would expect d.grad_fn not to be None", "结果不一样"), however it is put."""
    return any(p.search(question) for p in _compiled().unexpected)


def question_kinds(question: str) -> list[str]:
    """The kinds of answer ``question`` wants, e.g. ``['definition']`` or ``['reason']``."""
    return [
        name
        for name, (patterns, _) in _compiled().kinds.items()
        if any(p.search(question) for p in patterns)
    ]


def about_whole_lessons(kinds: list[str]) -> bool:
    """Whether a question of ``kinds`` is about everything at once (a recap, a checklist)."""
    return bool(_compiled().whole & set(kinds))


def kind_preference(kinds: list[str]) -> dict[str, float]:
    """Passage kind -> multiplier for a question of ``kinds`` (1 where nothing is said)."""
    out: dict[str, float] = {}
    for name in kinds:
        for passage_kind, factor in _compiled().kinds[name][1].items():
            out[passage_kind] = out.get(passage_kind, 1.0) * factor
    return {k: v for k, v in out.items() if not math.isclose(v, 1.0)}
