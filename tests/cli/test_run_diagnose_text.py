"""``tutor run`` / ``tutor diagnose`` as a Chinese-speaking learner sees them: a bad path and
a stopped run are told in the learner's language, and diagnoses look the same in both."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tutor.cli import add_subcommand, diagnose_cmd, run_cmd
from tutor.diagnosis.models import Diagnosis
from tutor.errors import TutorError
from tutor.i18n import T
from tutor.sandbox.models import ErrorInfo, RunResult


def parse(module: object, name: str, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"), name)
    return parser.parse_args([name, *argv])


@pytest.mark.parametrize(("module", "name"), [(run_cmd, "run"), (diagnose_cmd, "diagnose")])
def test_bad_paths_are_explained_in_chinese(module: object, name: str, tmp_path: Path) -> None:
    with pytest.raises(TutorError) as missing:
        module.run(parse(module, name, str(tmp_path / "nope.py"), "--lang", "zh"))  # type: ignore[attr-defined]
    assert "文件不存在" in str(missing.value) and "检查路径" in str(missing.value)
    assert missing.value.exit_code == 2
    with pytest.raises(TutorError) as folder:
        module.run(parse(module, name, str(tmp_path), "--lang", "zh"))  # type: ignore[attr-defined]
    assert "文件夹" in str(folder.value)
    binary = tmp_path / "b.py"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TutorError) as undecodable:
        module.run(parse(module, name, str(binary), "--lang", "zh"))  # type: ignore[attr-defined]
    assert "UTF-8" in str(undecodable.value) and "不是" in str(undecodable.value)


def test_a_timeout_is_reported_in_the_learners_language(capsys: pytest.CaptureFixture[str]) -> None:
    result = RunResult(outcome="timeout", device="cpu", error=ErrorInfo(
        type="Timeout", message="the code ran longer than 2 s and was stopped"))
    run_cmd._print_result(result, [], "zh", timeout=2)
    err = capsys.readouterr().err
    assert "已停止：代码运行超过 2 秒。" in err and "the code ran" not in err


@pytest.mark.parametrize(("lang", "said"), [("en", "Did you mean backward()?"),
                                            ("zh", "你是不是想写 backward()？")])
def test_run_says_did_you_mean_as_the_app_does(capsys: pytest.CaptureFixture[str], lang: str,
                                               said: str) -> None:
    """Issue 22 #9: `y.backwards()` got generic advice and no "did you mean backward()"
    from `tutor run` (the app said it; the CLI did not)."""
    code = "import torch\nweights = torch.ones(2, requires_grad=True)\ny.backwards()\n"
    typo = RunResult(outcome="error", device="cpu", error=ErrorInfo(
        type="AttributeError", message="'Tensor' object has no attribute 'backwards'", line=3,
        source_line="y.backwards()"))
    run_cmd._print_result(typo, [], lang, code=code)
    assert said in capsys.readouterr().err
    name = RunResult(outcome="error", device="cpu", error=ErrorInfo(
        type="NameError", message="name 'weight' is not defined", line=3))
    run_cmd._print_result(name, [], "en", code=code)
    assert "Did you mean weights?" in capsys.readouterr().err  # the learner's own name


def test_run_prints_a_diagnosis_like_diagnose_does(capsys: pytest.CaptureFixture[str]) -> None:
    diagnosis = Diagnosis(id="x", severity="error", title=T("Title", "标题"),
                          explanation=T("Because", "因为"), fix=T("Do this", "这样做"),
                          line=3, details=T("`z`: shape (2,)", "`z`：形状 (2,)"),
                          lesson_ref="non-scalar/fix-scalar")
    run_cmd._print_result(RunResult(outcome="ok", device="cpu"), [diagnosis], "zh")
    err = capsys.readouterr().err
    assert "【错误】标题（第 3 行）" in err
    assert "形状 (2,)" in err and "non-scalar/fix-scalar" in err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_catalog_table_keeps_every_lesson_ref_whole_in_80_columns(lang: str) -> None:
    # `tutor diagnose --list` in 80 columns cut refs to "non-scalar/gradient-argum…", then
    # folded them inside a word ("…/gradient-argume" / "nt")
    from rich.console import Console

    from tutor.cli.diagnosis_view import catalog_table
    from tutor.diagnosis import load_catalog

    console = Console(width=80, record=True, color_system=None)
    catalog = load_catalog()
    console.print(catalog_table(catalog, lang))  # type: ignore[arg-type]
    cells = [line.split("│")[1].strip() for line in console.export_text().splitlines()
             if line.count("│") >= 4]
    for entry in catalog.entries:
        assert entry.lesson_ref in cells, entry.lesson_ref


def test_catalog_titles_in_chinese_break_between_characters_not_after_a_lone_name() -> None:
    # zh put a lone `x` on its own line: Rich only broke at spaces, so the Chinese phrase after
    # it moved whole to the next line
    from rich.console import Console

    from tutor.cli.diagnosis_view import catalog_table
    from tutor.diagnosis import load_catalog

    console = Console(width=80, record=True, color_system=None)
    console.print(catalog_table(load_catalog(), "zh"))
    titles = [line.split("│")[3].strip() for line in console.export_text().splitlines()
              if line.count("│") >= 4]
    assert "`x`" not in titles
    assert any(t.startswith("`x` 只计算了一次") for t in titles)


@pytest.mark.parametrize(("question", "lang", "says"), [
    ("", "en", "the question is empty"), ("   ", "zh", "问题是空的"),
])
def test_an_empty_question_is_a_usage_error(question: str, lang: str, says: str) -> None:
    # `tutor ask ""` printed a prompt and exited 0, so a script could not tell it failed
    from tutor.cli import ask_cmd

    with pytest.raises(TutorError) as caught:
        ask_cmd.run(parse(ask_cmd, "ask", question, "--lang", lang))
    # message_in: the CLI prints the message in the user's language (str() is the English)
    assert caught.value.exit_code == 2 and says in caught.value.message_in(lang)


def test_verify_refuses_jobs_zero_like_grade(tmp_path: Path) -> None:
    from tutor.cli import verify_cmd

    with pytest.raises(TutorError, match="--jobs must be at least 1") as caught:
        verify_cmd.run(parse(verify_cmd, "verify", "--dir", str(tmp_path), "--jobs", "0"))
    assert caught.value.exit_code == 2


class _StoppedSandbox:
    """Stands in for the sandbox: every run hits the time limit."""

    def __init__(self, **_options: object) -> None:  # hide=..., few_runs=...
        pass

    def __enter__(self) -> _StoppedSandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def run(self, code: str, **_kwargs: object) -> RunResult:
        return RunResult(outcome="timeout", device="cpu", error=ErrorInfo(
            type="Timeout", message="the code ran longer than 2 s and was stopped"))


def test_diagnose_says_a_timeout_in_chinese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the header was "Timeout：the code ran longer than 2 s and was stopped" under --lang zh
    monkeypatch.setattr("tutor.sandbox.Sandbox", _StoppedSandbox)
    script = tmp_path / "loop.py"
    script.write_text("while True:\n    pass\n", encoding="utf-8")
    assert diagnose_cmd.run(parse(diagnose_cmd, "diagnose", str(script), "--timeout", "2",
                                  "--lang", "zh")) == 1
    out = capsys.readouterr().out
    assert "已停止：代码运行超过 2 秒。" in out and "the code ran" not in out
    assert "程序运行时间过长" in out


def test_diagnose_header_leaves_out_torchs_build_notes() -> None:
    error = ErrorInfo(type="RuntimeError", line=3, message=(
        "element 0 of tensors does not require grad (Triggered internally at "
        "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)\nmore"))
    header = diagnose_cmd._error_header(error, "en")
    assert "element 0 of tensors does not require grad" in header
    assert "Triggered internally" not in header and "/__w/" not in header
