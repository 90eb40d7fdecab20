"""``Sandbox.run(on_output=...)``: the learner's output while the run goes, within the limit."""

from __future__ import annotations

import threading

import pytest

from tutor.sandbox import Limits, Sandbox


def test_output_arrives_while_the_run_is_still_going(sandbox: Sandbox) -> None:
    # The run prints, then never ends by itself: only a listener that saw the line while
    # the run went can stop it (cancel); without streaming it would run into its time limit.
    cancel = threading.Event()
    seen: list[str] = []

    def listener(text: str) -> None:
        seen.append(text)
        if "ready" in "".join(seen):
            cancel.set()

    code = "print('ready', flush=True)\nwhile True:\n    pass\n"
    result = sandbox.run(code, cancel=cancel, on_output=listener,
                         limits=Limits(wall_time_s=60))
    assert result.error is not None and result.error.type == "Cancelled", result
    assert "".join(seen) == "ready\n" == result.stdout


def test_the_chunks_join_to_the_output_with_characters_whole(sandbox: Sandbox) -> None:
    # ~60 kB of three-byte characters, written in pieces: reads split some characters.
    code = ("import sys\n"
            "for i in range(200):\n"
            "    sys.stdout.write('叶子张量的梯度' * 14 + '\\n')\n"
            "    if i % 50 == 0:\n"
            "        sys.stdout.flush()\n"
            "print('done', file=sys.stderr)\n")
    chunks: list[str] = []
    result = sandbox.run(code, on_output=chunks.append, limits=Limits(output_bytes=200_000))
    assert result.outcome == "ok", result
    joined = "".join(chunks)
    assert "\ufffd" not in joined
    assert joined.replace("done\n", "", 1) == result.stdout
    assert result.stderr == "done\n" and "done\n" in joined
    assert len(chunks) > 1


def test_streaming_keeps_the_output_limit(sandbox: Sandbox) -> None:
    chunks: list[str] = []
    result = sandbox.run("while True:\n    print('x' * 1000)\n", on_output=chunks.append,
                         limits=Limits(output_bytes=10_000, wall_time_s=30))
    assert result.outcome == "output_limit"
    joined = "".join(chunks)
    assert joined == result.stdout
    kept, _, marker = joined.partition("\n… [output cut")
    assert marker and len(kept.encode()) <= 10_000


def test_a_listener_that_raises_gets_its_error_back_after_the_run(sandbox: Sandbox) -> None:
    class Gone(Exception):
        pass

    def listener(text: str) -> None:
        raise Gone(text)

    with pytest.raises(Gone):  # and at once: the run is stopped, not left to its limit
        sandbox.run("print('hi', flush=True)\nwhile True:\n    pass\n", on_output=listener,
                    limits=Limits(wall_time_s=600))
    after = sandbox.run("print('next')")  # the run before left nothing behind
    assert after.outcome == "ok" and after.stdout == "next\n"


def test_a_run_without_a_listener_is_unchanged(sandbox: Sandbox) -> None:
    result = sandbox.run("print('a')\nimport sys\nprint('b', file=sys.stderr)")
    assert (result.stdout, result.stderr) == ("a\n", "b\n")
