"""Output shown while a run is going, for runners that can stream it.

The contract asked of the sandbox (``Sandbox.run``): an optional keyword
``on_output: Callable[[str], None] | None = None``, called from the runner's thread with
each chunk of the learner process's stdout/stderr as it arrives (already counted against
the output limit; never after ``run`` returns). A runner without it is used as it is, and
the output comes with the result, as before.

Only the learner's own run streams: grading runs the reference solution (and hidden
inputs) through the same runner, and their output must never reach the screen. So the
listener is given to one run, the first whose code is the learner's code, and then let go.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

OutputListener = Callable[[str], None]


def accepts_on_output(run: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False
    return "on_output" in params


class StreamingRunner:
    """Wraps the app's runner; :meth:`listen` arms the next run of ``code``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._armed: tuple[str, OutputListener] | None = None
        self._accepts: bool | None = None  # asked on the first run: the sandbox is lazy

    def listen(self, code: str, listener: OutputListener) -> None:
        with self._lock:
            self._armed = (code, listener)

    def stop_listening(self) -> None:
        with self._lock:
            self._armed = None

    def run(self, code: str, **kwargs: Any) -> Any:
        with self._lock:
            armed = self._armed
            if armed is not None and armed[0] == code:
                self._armed = None  # this run only
            else:
                armed = None
        if armed is not None:
            if self._accepts is None:
                self._accepts = accepts_on_output(self._inner.run)
            if self._accepts:
                kwargs["on_output"] = armed[1]
        return self._inner.run(code, **kwargs)

    def devices(self) -> list[str]:
        return list(self._inner.devices())

    def __getattr__(self, name: str) -> Any:  # resolve_device, close and friends
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._inner, name)
