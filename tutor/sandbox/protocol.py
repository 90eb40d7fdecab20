"""Framing of the messages between the parent, the warm server and a run's process.

Everything that crosses is bytes of JSON inside length-prefixed frames. A frame from a run
starts with its kind and the run's nonce, so bytes the learner writes to the channel by
accident are discarded instead of being read as the result. The nonce is no security: the
run's own process holds it, so learner code can write a well-formed frame. What a frame
says is only ever the learner's claim, validated as data; a grade rests on values compared
in the parent with expected values the run never sees. Nothing is ever unpickled.
"""

from __future__ import annotations

import signal
import struct

HEADER = struct.Struct(">I")
WHERE_SIGNAL = signal.SIGUSR1
"""Parent → run, at the time, memory or output limit: say where you are (:data:`KIND_WHERE`)
before you are killed."""
MAX_FRAME = 32 * 1024 * 1024
"""A frame longer than this is treated as garbage (a forged or broken channel)."""

KIND_DONE = b"done"
"""Child → parent: the learner's code finished; send the probes now."""
KIND_RESULT = b"result"
"""Child → parent: the final RunResult JSON."""
KIND_TRACE = b"trace"
"""Child → parent, only when the request asked for it: the run's phase marks (JSON)."""
KIND_WHERE = b"where"
"""Child → parent, when the parent stops a run (SIGUSR1, see :data:`WHERE_SIGNAL`): the
learner's frames the run was in, outermost first, as JSON ``[[line, function], ...]``."""
KINDS = (KIND_DONE, KIND_RESULT, KIND_TRACE, KIND_WHERE)


def encode(kind: bytes, nonce: bytes, payload: bytes) -> bytes:
    body = kind + b":" + nonce + b":" + payload
    return HEADER.pack(len(body)) + body


class FrameError(ValueError):
    """The byte stream cannot be a sequence of our frames."""


class FrameReader:
    """Incremental reader of frames from a byte stream; raises FrameError on garbage."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buffer = bytearray()
        self._max_frame = max_frame

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        frames: list[bytes] = []
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > self._max_frame:
                raise FrameError(f"frame of {length} bytes exceeds {self._max_frame}")
            if len(self._buffer) < HEADER.size + length:
                break
            frames.append(bytes(self._buffer[HEADER.size : HEADER.size + length]))
            del self._buffer[: HEADER.size + length]
        return frames

    @property
    def pending(self) -> int:
        return len(self._buffer)


def split(frame: bytes, nonce: bytes) -> tuple[bytes, bytes]:
    """Return (kind, payload) of a frame; FrameError when it does not carry ``nonce``."""
    kind, sep1, rest = frame.partition(b":")
    got, sep2, payload = rest.partition(b":")
    if not (sep1 and sep2) or got != nonce or kind not in KINDS:
        raise FrameError("frame without this run's nonce")
    return kind, payload
