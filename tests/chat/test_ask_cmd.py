"""`tutor ask`: the command in-process and, where the whole CLI builds, as a subprocess."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_process import ask_fresh

from tutor.cli import add_subcommand, ask_cmd
from tutor.errors import TutorError

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "mini_course"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"), "ask")
    return parser.parse_args(["ask", *argv])


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("TUTOR_LLM_BASE_URL", "TUTOR_LLM_MODEL", "TUTOR_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TUTOR_LLM_CONFIG", str(tmp_path / "no-llm.yaml"))
    monkeypatch.delenv("TUTOR_LANG", raising=False)


def test_json_answer_names_lessons(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_cmd.run(_args("--json", "why does backward need a scalar?")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lang"] == "en" and out["kind"] == "answer" and out["lessons"]
    assert out["lessons"][0] == "non-scalar"


def test_chinese_question_gets_a_chinese_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert ask_cmd.run(_args("梯度为什么会累加？")) == 0
    assert "累加" in capsys.readouterr().out


def _ask_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert ask_cmd.run(_args(*argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_solution_request_on_a_step_gives_its_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    step = ("--lessons", str(MINI), "--step", "mini-graph/fix-scalar", "--data-dir", str(tmp_path))
    out = _ask_json(capsys, *step, "--json", "just give me the code")
    assert out["refused"] and out["hint_level"] == 1


def test_hint_level_persists_across_runs_and_unlocks_only_after_an_attempt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each run is a new Tutor, as a new `tutor ask` process is: only the progress store
    carries what was seen and tried."""
    from tutor.progress import ProgressStore

    ref = "mini-graph/fix-scalar"
    step = ("--lessons", str(MINI), "--step", ref, "--data-dir", str(tmp_path), "--json")
    assert _ask_json(capsys, *step, "just give me the code")["hint_level"] == 1
    with ProgressStore.default(tmp_path) as store:
        assert store.hints_revealed(ref) == 1
    again = _ask_json(capsys, *step, "直接把这一步的代码发我")
    assert again["hint_level"] == 1 and again["refused"]
    with ProgressStore.default(tmp_path) as store:
        assert store.hints_revealed(ref) == 1
        store.record_attempt(ref, "y.backward()", passed=False, score=0, max_score=1)
    assert _ask_json(capsys, *step, "what's the answer to this step?")["hint_level"] == 2
    assert _ask_json(capsys, *step, "what's the answer to this step?")["hint_level"] == 2
    with ProgressStore.default(tmp_path) as store:
        assert store.hints_revealed(ref) == 2


def test_plain_output_also_records_the_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tutor.progress import ProgressStore

    ref = "mini-graph/fix-scalar"
    args = _args("--lessons", str(MINI), "--step", ref, "--data-dir", str(tmp_path), "solution?")
    assert ask_cmd.run(args) == 0
    assert "Hint 1 of 2" in capsys.readouterr().out
    with ProgressStore.default(tmp_path) as store:
        assert store.hints_revealed(ref) == 1


def test_unknown_step_is_a_clear_error() -> None:
    with pytest.raises(TutorError, match="no such lesson step"):
        ask_cmd.run(_args("--step", "nope/none", "what?"))


def _cli_builds() -> bool:
    try:
        from tutor.cli import build_parser

        build_parser()
    except (ImportError, SystemExit):
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _cli_builds(), reason="other subcommands of the CLI not landed yet")
def test_tutor_ask_as_a_user_calls_it(tmp_path: Path) -> None:
    env = {**os.environ, "TUTOR_LLM_CONFIG": str(tmp_path / "none.yaml"), "PYTHONPATH": str(ROOT)}
    env.pop("TUTOR_LLM_BASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "ask", "--lang", "zh", "what is requries_grad?"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "requires_grad" in done.stdout and "参阅" in done.stdout


def test_tutor_lang_sets_the_answer_language(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # --lang, then TUTOR_LANG, then the question's language (README and ask --help)
    monkeypatch.setenv("TUTOR_LANG", "zh")
    assert _ask_json(capsys, "--json", "what is grad_fn")["lang"] == "zh"
    assert _ask_json(capsys, "--json", "--lang", "en", "什么是 grad_fn")["lang"] == "en"
    monkeypatch.delenv("TUTOR_LANG")
    assert _ask_json(capsys, "--json", "什么是 grad_fn")["lang"] == "zh"
    assert _ask_json(capsys, "--json", "what is grad_fn")["lang"] == "en"


def test_help_states_the_language_rule() -> None:
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"), "ask")
    help_text = " ".join(_subparser(parser, "ask").format_help().split())
    assert "TUTOR_LANG" in help_text and "question's language" in help_text
    assert "picked in the app" in help_text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    rule = ("`tutor ask` answers in `--lang`, else `TUTOR_LANG`, else the language picked in the "
            "app, else the question's language")
    assert rule in readme


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def test_unknown_step_is_reported_in_chinese() -> None:
    with pytest.raises(TutorError) as info:
        ask_cmd.run(_args("--lang", "zh", "--step", "nonsense", "hi"))
    assert info.value.message_in("zh") == "--step nonsense：没有这个课程步骤"
    assert "tutor lessons" in (info.value.hint_in("zh") or "")
    assert info.value.message_in("en") == "--step nonsense: no such lesson step"


def test_why_does_it_error_on_a_step(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = _ask_json(
        capsys,
        "--json",
        "--data-dir",
        str(tmp_path),
        "--step",
        "non-scalar/fix-scalar",
        "它为什么报错？",
    )
    assert out["kind"] == "context" and not out["refused"]
    assert out["lessons"] == ["non-scalar"] and "标量" in str(out["text"])


def test_a_symptom_said_in_general_is_answered_without_the_tutor(tmp_path: Path) -> None:
    # "why is x.grad None" is answered by the symptom's likely causes on tutor ask's quick
    # path (tests/chat/test_cards.py: the same text as the Tutor's), without pydantic, the
    # retrieval index or the diagnosis catalog, which cost a shell question ~0.15 s
    heavy = ["pydantic", "tutor.chat.tutor", "tutor.chat.index", "tutor.diagnosis"]
    answer, loaded = ask_fresh("why is x.grad None", heavy, tmp_path)
    assert "the usual causes" in "\n".join(answer)
    assert loaded == []
