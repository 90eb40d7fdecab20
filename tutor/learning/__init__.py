"""The one learning session behind the TUI, ``tutor watch`` and ``tutor verify``.

:mod:`tutor.learning.session` holds the session (run -> grade -> diagnose -> record, hints,
position); :mod:`tutor.learning.exercises` maps a workspace's exercise files onto it for
learners who use their own editor.
"""

from tutor.learning.session import (
    GRADED_KINDS,
    RUNNABLE_KINDS,
    Attempt,
    CancellableRunner,
    Diagnose,
    GradingLike,
    GraphView,
    HintShown,
    LearningSession,
    NotRunnable,
    ProgressLike,
    UnknownDevice,
    UnknownLesson,
    assigned_names,
    step_ref,
)

__all__ = [
    "GRADED_KINDS",
    "RUNNABLE_KINDS",
    "Attempt",
    "CancellableRunner",
    "Diagnose",
    "GradingLike",
    "GraphView",
    "HintShown",
    "LearningSession",
    "NotRunnable",
    "ProgressLike",
    "UnknownDevice",
    "UnknownLesson",
    "assigned_names",
    "step_ref",
]
