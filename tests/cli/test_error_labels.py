"""A user error is one message with its hint, the labels in the user's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import main


@pytest.mark.parametrize(
    ("lang", "labels"),
    [("en", ("tutor: error: ", "  hint: ")), ("zh", ("tutor: 错误：", "  提示："))],
)
def test_error_and_hint_labels_follow_the_language(
    lang: str, labels: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "missing.py"), "--lang", lang]) == 2
    first, second = capsys.readouterr().err.splitlines()
    assert first.startswith(labels[0])
    assert second.startswith(labels[1])
    assert "Traceback" not in first + second
