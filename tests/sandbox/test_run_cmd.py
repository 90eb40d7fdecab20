"""``tutor run``: output, the learner's error line, JSON, and exit codes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tutor.cli import add_subcommand, run_cmd
from tutor.errors import TutorError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"), "run")
    return parser.parse_args(["run", *argv])


def test_error_run_prints_line_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import torch\nx = torch.ones(2, requires_grad=True)\nprint('hi')\n"
                      "(x * 2).backward()\n")
    assert run_cmd.run(parse(str(script), "--device", "cpu", "--json", "--lang", "en")) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["result"]["outcome"] == "error"
    assert payload["result"]["stdout"] == "hi\n"
    assert payload["result"]["error"]["line"] == 4
    assert isinstance(payload["diagnoses"], list)


def test_plain_output_and_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "fine.py"
    script.write_text("print('你好', 1 + 1)\n")
    assert run_cmd.run(parse(str(script), "--device", "cpu", "--lang", "zh")) == 0
    assert capsys.readouterr().out == "你好 2\n"


def test_missing_file_and_bad_timeout_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(TutorError) as caught:
        run_cmd.run(parse(str(tmp_path / "nope.py")))
    assert caught.value.exit_code == 2 and "no such file" in str(caught.value)
    script = tmp_path / "x.py"
    script.write_text("pass\n")
    with pytest.raises(TutorError):
        run_cmd.run(parse(str(script), "--timeout", "0"))


def test_learner_files_named_like_modules_do_not_shadow_them(tmp_path: Path) -> None:
    """Beginners name files after what they study: a ``numpy.py`` or ``torch.py`` in the
    folder they run from must not replace the real module in the sandbox server."""
    import subprocess
    import sys

    if sys.version_info < (3, 11):
        pytest.skip("python -P (used here to start the CLI like its console script) is 3.11+")

    for name in ("numpy", "torch", "random"):
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('shadowed {name}')\n")
    (tmp_path / "lesson.py").write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
        "print(x.grad)\n"
    )
    # -P: like the `tutor` console script, the CLI itself does not import from the folder.
    done = subprocess.run(
        [sys.executable, "-P", "-m", "tutor", "run", "lesson.py", "--device", "cpu"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "tensor([3., 3.])\n"


def test_a_learners_run_sees_the_lessons_and_caches_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tutor.course.loader import bundled_lessons_dir

    cache = tmp_path / "cache"
    (cache / "expected").mkdir(parents=True)
    (cache / "expected" / "truth.json").write_text("{}")
    monkeypatch.setenv("TUTOR_CACHE_DIR", str(cache))
    lessons = bundled_lessons_dir().resolve()
    assert any(lessons.glob("*.yaml"))
    script = tmp_path / "peek.py"
    # confined, neither folder exists for the run; hidden, it would see them empty
    script.write_text("import os\n"
                      "def seen(p):\n    return os.listdir(p) if os.path.isdir(p) else []\n"
                      f"print(seen({str(lessons)!r}), seen({str(cache)!r}))\n")
    assert run_cmd.run(parse(str(script), "--device", "cpu")) == 0
    out = capsys.readouterr().out
    from tutor.sandbox import Sandbox

    with Sandbox(hide=[tmp_path / "nothing-here"]) as probe:
        if probe.exposed():
            pytest.skip("this kernel gives runs no mount namespace")
    assert out == "[] []\n"


def test_on_a_terminal_the_output_shows_while_the_run_goes(tmp_path: Path) -> None:
    """A learner's training loop prints as it goes: `tutor run` on a terminal shows each
    line when it comes, not all of it once the run is over."""
    import os
    import pty
    import select
    import subprocess
    import sys

    script = tmp_path / "loop.py"
    script.write_text("print('epoch 1', flush=True)\nwhile True:\n    pass\n")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tutor", "run", str(script), "--device", "cpu",
         "--timeout", "120", "--lang", "en"],
        stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    os.close(follower)
    seen = b""
    try:
        while b"epoch 1" not in seen and proc.poll() is None:
            if select.select([leader], [], [], 1.0)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:  # the terminal closed: the command is over
                    break
        still_running = proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
    assert b"epoch 1" in seen
    assert still_running, "the line came only once the run was over"
