"""``tutor preview`` and the shared options on every subcommand (issue 22 #10), and the
top-level help in Chinese (#5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import SUBCOMMANDS, build_parser, main

REQUIRED = {"ask": ["q"], "run": ["f.py"], "diagnose": ["f.py"], "grade": ["subs"],
            "preview": ["x"], "reset": ["1"], "hint": ["1"],
            "export": ["feedback", "r.json", "-o", "out"]}
MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_shared_options_after_the_subcommand(command: str) -> None:
    """``tutor lessons --data-dir X`` was rejected."""
    args = build_parser().parse_args(
        [command, *REQUIRED.get(command, []), "--data-dir", "/tmp/d", "--lang", "zh",
         "--lessons", "/tmp/l"]
    )
    assert args.data_dir == Path("/tmp/d") and args.lang == "zh"
    assert args.lessons == Path("/tmp/l")


def test_lessons_takes_data_dir(capsys, tmp_path: Path) -> None:
    assert main(["lessons", "--lessons", str(MINI), "--data-dir", str(tmp_path)]) == 0
    assert "mini-basics" in capsys.readouterr().out


def test_preview_prints_one_step(capsys) -> None:
    assert main(["preview", "mini-basics/who-tracks", "--lessons", str(MINI), "--lang", "zh",
                 "--print"]) == 0
    out = capsys.readouterr().out
    assert "谁会追踪历史" in out and "测验" in out


def test_preview_of_a_step_that_is_not_there_suggests(capsys) -> None:
    assert main(["preview", "mini-basics/who-track", "--lessons", str(MINI)]) == 2
    err = capsys.readouterr().err
    assert "no step 'who-track'" in err and "who-tracks" in err
    assert main(["preview", "mini-basic", "--lessons", str(MINI)]) == 2
    assert "mini-basics" in capsys.readouterr().err


def test_top_level_help_in_chinese(capsys) -> None:
    """``tutor --help`` stayed English in zh."""
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("用法：")
    # the colon after a heading is argparse's layout, not a word of its catalog
    assert "\n选项：\n" in out and "显示本帮助并退出" in out and "列出课程" in out
    assert "show this help" not in out and "list the course" not in out


def test_preview_app_shows_the_step_alone() -> None:
    import asyncio

    from tutor.cli.preview_cmd import find_step
    from tutor.course import load_course
    from tutor.tui.preview import PreviewApp

    lesson, step = find_step(load_course(MINI), "mini-basics/grad-value")

    async def main() -> None:
        app = PreviewApp(lesson, step, "en")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            body = app.query_one("#step-body")
            assert "Read the gradient" in body.source  # type: ignore[attr-defined]
            assert app.query("#answer-input") and not app.query_one("#step-nav").display
            await pilot.press("escape")
        assert app.return_code == 0

    asyncio.run(main())
