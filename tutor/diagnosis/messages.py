"""torch's warning and error messages as a learner should read them.

torch appends notes meant for its own developers: where in its C++ build a warning was
raised, or a C++ stack. They name files the learner has never seen (``/__w/pytorch/...``),
so every place that shows a run's warnings or error text passes it through
``for_learner`` first; the data in ``RunResult`` stays as torch wrote it.
"""

from __future__ import annotations

import re

INTERNAL_NOTES = (
    # UserWarning: ... (Triggered internally at /__w/pytorch/pytorch/.../TensorBody.h:493.)
    re.compile(r"\s*\(Triggered internally at [^\n]*?\.\)", re.IGNORECASE),
    # TORCH_SHOW_CPP_STACKTRACES=1: "Exception raised from f at /path:12 (most recent call
    # first):" and the frames after it, up to the end of the message
    re.compile(r"\n?Exception raised from [^\n]* \(most recent call first\):.*", re.DOTALL),
)


def for_learner(message: str) -> str:
    """The message without torch's internal build notes; unchanged when it has none."""
    for note in INTERNAL_NOTES:
        message = note.sub("", message)
    return message.rstrip()
