"""``tutor diagnose`` as a user calls it: catalog listing, a file run and explained,
static-only mode, JSON, clear errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from silent_programs import UNTRAINED_PART

from tutor.cli import add_subcommand, common, diagnose_cmd
from tutor.errors import TutorError

CORPUS = Path(__file__).parent / "corpus"


def call(*argv: str) -> int:
    """Parse the way ``tutor`` does (a global --lang, then the subcommand) and run."""
    parser = argparse.ArgumentParser(prog="tutor")
    common.add_lang(parser)
    subparsers = parser.add_subparsers(dest="command")
    add_subcommand(subparsers, "diagnose")
    return diagnose_cmd.run(parser.parse_args(["diagnose", *argv]))


def test_list_shows_the_catalog_in_english_and_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert call("--list", "--lang", "en") == 0
    out = capsys.readouterr().out
    assert "non-scalar-backward" in out and "Diagnosis catalog" in out
    assert call("--list", "--lang", "zh") == 0
    assert "诊断目录" in capsys.readouterr().out


def test_list_as_json_is_the_catalog_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert call("--list", "--json") == 0
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert len(entries) >= 30 and entries[0]["id"] == "non-scalar-backward"


def test_a_file_is_run_and_explained(capsys: pytest.CaptureFixture[str]) -> None:
    status = call(str(CORPUS / "nonscalar_square.py"), "--lang", "en", "--device", "cpu")
    out = capsys.readouterr().out
    assert status == 1
    assert "RuntimeError on line 8" in out
    assert "[error] `y` is not a scalar" in out
    assert "`y.sum().backward()`" in out


SOFTMAX_INTO_CE = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
x = torch.randn(64, 4)
y = torch.randint(0, 3, (64,))
for epoch in range(50):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_a_program_that_runs_but_learns_wrong_is_explained_from_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Asked to diagnose, a run without error is repeated with instrumentation: the silent
    bug (probabilities given to a loss that takes logits) is found from what the loss got,
    and its fix tried, which no rule on the source alone reads here."""
    source = tmp_path / "train.py"
    source.write_text(SOFTMAX_INTO_CE)
    assert call(str(source), "--json", "--device", "cpu") == 0
    found = json.loads(capsys.readouterr().out)
    assert found, "a silent bug is diagnosed"
    assert found[0]["id"] == "softmax-before-ce" and found[0]["line"] == 5
    assert found[0]["fix_verified"] is True


def test_static_mode_does_not_run_and_can_print_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "train.py"
    source.write_text((CORPUS / "pitfall_no_zero_grad.py").read_text(encoding="utf-8")
                      + "\nraise SystemExit('a static check never runs this')\n")
    assert call(str(source), "--static", "--json") == 0
    (found,) = json.loads(capsys.readouterr().out)
    assert (found["id"], found["severity"], found["line"]) == ("missing-zero-grad", "pitfall", 14)


def test_a_clean_file_says_so_in_chinese(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "ok.py"
    source.write_text("print(1 + 1)\n")
    assert call(str(source), "--static", "--lang", "zh") == 0
    assert "没有发现已知的错误" in capsys.readouterr().out




def test_a_run_without_a_known_mistake_says_what_it_shows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a bare "nothing found": the loss backpropagated and where it went, what the
    optimizer moved, the parameters nothing trains (here the encoder, detached and in no
    optimizer: perhaps meant, so no check calls it a mistake), whether a nan appeared."""
    source = tmp_path / "part.py"
    source.write_text(UNTRAINED_PART)
    assert call(str(source), "--lang", "en") == 0
    out = capsys.readouterr().out
    assert "No known mistake found in this run." in out and "What the run shows" in out
    assert "the loss backpropagated on line 10 (`loss`) went from" in out and "falling" in out
    assert "`opt` steps 2 parameters: all of them changed" in out
    assert "2 parameters (`enc`) are in no optimizer" in out and "no nan or inf" in out
    assert call(str(source), "--lang", "zh") == 0
    assert "这次运行显示" in capsys.readouterr().out


def test_static_mode_on_broken_syntax_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a learner's syntax error is explained and exits 1, as a run would (QA2 #12: was exit 2)
    source = tmp_path / "broken.py"
    source.write_text("import torch\nfor i in range(3)\n    print(i)\n")
    assert call(str(source), "--static", "--lang", "en") == 1
    assert capsys.readouterr().out.startswith("SyntaxError on line 2: expected ':'")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "nothing to diagnose"),
        (("missing.py",), "missing.py: no such file"),
        (("x.py", "--list"), "either FILE or --list"),
    ],
)
def test_bad_input_is_one_clear_error(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(TutorError, match=message):
        call(*argv)


@pytest.mark.slow
def test_end_to_end_as_a_subprocess(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    source = tmp_path / "twice.py"
    source.write_text((CORPUS / "twice_seed_mm.py").read_text(encoding="utf-8"))
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "diagnose", str(source), "--lang", "zh",
         "--device", "cpu"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "第二次对同一张计算图做反向传播" in done.stdout
    assert "retain_graph=True" in done.stdout
    assert "Traceback" not in done.stderr
