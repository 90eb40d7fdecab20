"""YAML data read through the JSON cache (tutor/data_cache.py), and what a shell question
imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    code = (
        "import sys\n"
        "from tutor.cli import main\n"
        "main(['ask', '--offline', 'detach 和 no_grad 有什么区别'])\n"
        "mods = set(sys.modules)\n"
        "print('grade' if 'tutor.cli.grade_cmd' in mods else '', 'yaml' if 'yaml' in mods else '')"
    )
    env = {**os.environ, "TUTOR_LLM_CONFIG": str(tmp_path / "none.yaml"),
           "TUTOR_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    env.pop("TUTOR_LLM_BASE_URL", None)
    run = [sys.executable, "-c", code]
    subprocess.run(run, env=env, capture_output=True, text=True, check=True)  # fills caches
    done = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1].split() == [], done.stdout
