"""A run stopped at a limit (time, memory, output) says which line of the learner's it was on."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tutor.sandbox import Limits, Sandbox

SPIN = """def spin(n):
    while n > 0:
        n += 1
    return n

total = spin(1)
"""


def test_an_endless_loop_gives_its_line_and_the_calls_to_it(sandbox: Sandbox) -> None:
    result = sandbox.run(SPIN, limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout" and result.error is not None, result
    error = result.error
    assert error.type == "Timeout"
    assert error.line in (2, 3) and error.source_line in ("while n > 0:", "n += 1")
    assert (error.traceback[0].line, error.traceback[0].function) == (6, "<module>")
    assert error.traceback[-1].function == "spin"
    assert error.traceback[0].source == "total = spin(1)"


def test_waiting_forever_gives_the_line_that_waits(sandbox: Sandbox) -> None:
    result = sandbox.run("import time\nprint('start')\ntime.sleep(600)\nprint('never')\n",
                         limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout" and result.stdout == "start\n"
    assert result.error is not None and result.error.line == 3
    assert result.error.source_line == "time.sleep(600)"


def test_a_memory_hog_gives_the_line_that_allocates(sandbox: Sandbox) -> None:
    code = ("import torch\n"
            "kept = []\n"
            "def grow():\n"
            "    for _ in range(100_000):\n"
            "        kept.append(torch.ones(10_000_000))\n"
            "grow()\n")
    result = sandbox.run(code, limits=Limits(memory_mb=200))
    assert result.outcome == "memory" and result.error is not None, result
    assert result.error.line == 5
    assert result.error.source_line == "kept.append(torch.ones(10_000_000))"
    assert [(f.line, f.function) for f in result.error.traceback] == [(6, "<module>"),
                                                                      (5, "grow")]


def test_printing_too_much_gives_the_line_that_prints(sandbox: Sandbox) -> None:
    result = sandbox.run("n = 0\nwhile True:\n    print('x' * 100)\n",
                         limits=Limits(output_bytes=5_000))
    assert result.outcome == "output_limit" and result.error is not None
    assert result.error.line == 3


def test_a_run_deaf_to_the_question_is_still_stopped_without_a_line(sandbox: Sandbox) -> None:
    code = ("import signal\n"
            "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
            "while True:\n"
            "    pass\n")
    result = sandbox.run(code, limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout" and result.error is not None
    assert result.error.line is None and result.error.traceback == []
    assert sandbox.run("print('next')").stdout == "next\n"


def test_a_run_that_answers_with_lines_it_does_not_have_is_not_believed(
        sandbox: Sandbox) -> None:
    # The learner's own handler answers for it with the run's real nonce (taken from the
    # frame that holds it): only lines of the code the run was given are kept.
    code = ("import gc, os, signal, json, struct\n"
            "nonce = next(o['nonce'] for o in gc.get_objects()\n"
            "             if type(o) is dict and isinstance(o.get('nonce'), str))\n"
            "def lie(*_):\n"
            "    body = b'where:' + nonce.encode() + b':' + json.dumps([[999, 'x']]).encode()\n"
            "    for fd in range(3, 64):\n"
            "        try:\n"
            "            os.write(fd, struct.pack('>I', len(body)) + body)\n"
            "        except OSError:\n"
            "            pass\n"
            "signal.signal(signal.SIGUSR1, lie)\n"
            "while True:\n"
            "    pass\n")
    result = sandbox.run(code, limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout" and result.error is not None
    assert result.error.line is None


def test_the_learner_reads_the_line_in_the_verdict_the_diagnosis_and_tutor_run(
        sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tutor.cli import add_subcommand, run_cmd
    from tutor.diagnosis.engine import generic_outcome
    from tutor.grading.checks import run_failure_message

    result = sandbox.run(SPIN, limits=Limits(wall_time_s=1))
    said = run_failure_message(result)
    assert f"stopped at line {result.error.line}" in said.en  # type: ignore[union-attr]
    assert f"在第 {result.error.line} 行被终止" in said.zh  # type: ignore[union-attr]
    diagnosis = generic_outcome(result)
    assert diagnosis is not None and diagnosis.line == result.error.line  # type: ignore[union-attr]

    script = tmp_path / "spin.py"
    script.write_text(SPIN)
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"), "run")
    args = parser.parse_args(["run", str(script), "--device", "cpu", "--timeout", "1",
                              "--lang", "en"])
    assert run_cmd.run(args) == 1
    err = capsys.readouterr().err
    assert "line 6, in <module>\n    total = spin(1)\n" in err
    assert "in spin" in err and "Stopped: the code ran longer than 1 s." in err
