"""What the app's workers report back: typed messages posted from their threads
(``post_message`` is thread-safe), handled on the UI thread by the app. A worker that fails
posts nothing: the app's one ``Worker.StateChanged`` handler says why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message
from textual.worker import Worker

from tutor.learning import Attempt, GraphView


@dataclass
class Attempted(Message):
    """A run, a quiz answer or a typed answer was graded (``ref``: the step it was for;
    ``worker``: the run's, None for a quiz, which is graded at once)."""

    attempt: Attempt
    ref: str
    worker: Worker[Any] | None = None


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
