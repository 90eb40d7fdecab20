"""What the app's workers report back: typed messages posted from their threads
(``post_message`` is thread-safe), handled on the UI thread by the app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from tutor.learning import Attempt, GraphView


@dataclass
class RunFinished(Message):
    """A run, a quiz answer or a typed answer was graded (``ref``: the step it was for)."""

    attempt: Attempt
    ref: str


@dataclass
class WorkFailed(Message):
    """A worker could not finish: ``message`` says why, in the learner's language.
    ``ends_run``: it was the run (or answer, or graph) in flight, which is over now."""

    message: str
    ends_run: bool = True
    severity: str = "error"


@dataclass
class GraphReady(Message):
    view: GraphView


@dataclass
class DevicesKnown(Message):
    devices: list[str]


@dataclass
class TutorAnswered(Message):
    answer: Any


@dataclass
class OutputArrived(Message):
    """A chunk of what the learner's run printed, while it runs."""

    chunk: str


@dataclass
class HighlightingReady(Message):
    """The syntax highlighter is warm: code drawn plain until now can be coloured."""
