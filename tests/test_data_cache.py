"""YAML data read through the JSON cache (tutor/data_cache.py), and what a shell question
imports."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_process import ask_fresh

from tutor.data_cache import read_data
from tutor.yaml_read import YamlFileError, read_yaml

ROOT = Path(__file__).resolve().parents[1]


def test_the_cached_data_is_the_files_data_and_follows_its_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "words.yaml"
    data.write_text("a: {en: one, zh: 一}\nb: [1, 2]\n", encoding="utf-8")
    assert read_data(data) == read_yaml(data)
    assert list((tmp_path / "cache" / "data").glob("words-*.json"))  # kept as JSON
    assert read_data(data) == {"a": {"en": "one", "zh": "一"}, "b": [1, 2]}  # from the cache
    data.write_text("a: two\n", encoding="utf-8")
    assert read_data(data) == {"a": "two"}  # a changed file is read again
    data.write_text("a: [\n", encoding="utf-8")
    with pytest.raises(YamlFileError):  # a broken one says where, as before
        read_data(data)


def test_a_shell_question_answered_by_a_card_imports_no_other_command_nor_yaml(
    tmp_path: Path,
) -> None:
    answer, loaded = ask_fresh("detach 和 no_grad 有什么区别", ["tutor.cli.grade_cmd", "yaml"],
                               tmp_path)
    assert answer and loaded == []
