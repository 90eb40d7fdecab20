"""The parse cache of the app's own YAML data files: served while the bytes are unchanged,
never when they are not, and exact or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from tutor import yaml_cache, yaml_read
from tutor.yaml_cache import read_yaml

CATALOG = """\
greeting:
  en: "Hello, {name}."
  zh: "你好，{name}。"
numbers: [1, 2.5, true, null]
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TUTOR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "yaml"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the YAML parser was given."""
    seen: list[str] = []
    real = yaml_read.load

    def load(text: str) -> object:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(yaml_cache, "load", load)
    return seen


def test_a_file_is_parsed_once_and_read_back_the_same(
    cache: Path, parses: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    first = read_yaml(path)
    assert first == {"greeting": {"en": "Hello, {name}.", "zh": "你好，{name}。"},
                     "numbers": [1, 2.5, True, None]}
    assert read_yaml(path) == first
    assert len(parses) == 1
    assert len(list(cache.glob("*.json"))) == 1


def test_an_edited_file_is_parsed_again(cache: Path, parses: list[str], tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    read_yaml(path)
    path.write_text(CATALOG.replace("Hello", "Hi"), encoding="utf-8")
    assert read_yaml(path)["greeting"]["en"] == "Hi, {name}."
    assert len(parses) == 2


def test_data_json_would_change_is_never_kept(
    cache: Path, parses: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("1: one\nnan: .nan\n", encoding="utf-8")
    for _ in range(2):
        data = read_yaml(path)
        assert data[1] == "one"  # an int key stays an int
    assert len(parses) == 2
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_a_corrupt_entry_is_parsed_again(cache: Path, parses: list[str], tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    expected = read_yaml(path)
    for entry in cache.glob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert read_yaml(path) == expected
    assert len(parses) == 2


def test_an_unwritable_cache_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setattr(yaml_cache, "cache_dir", lambda: blocker / "yaml")
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    assert read_yaml(path) == read_yaml(path)
    assert len(parses) == 2


def test_errors_are_the_parsers_own(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_yaml(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("key: [unclosed\n", encoding="utf-8")
    with pytest.raises(YAMLError):
        read_yaml(broken)


def test_the_bundled_catalogs_read_back_exactly(cache: Path) -> None:
    """Every data file read through the cache gives the same data from it as parsed."""
    root = Path(yaml_cache.__file__).parent
    names = ["grading/messages.yaml", "course/lint_messages.yaml", "diagnosis/catalog.yaml",
             "chat/concepts.yaml", "chat/cues.yaml", "chat/domains.yaml", "chat/glossary.yaml",
             "chat/intents.yaml", "chat/solution_requests.yaml", "chat/symptoms.yaml"]
    for name in names:
        parsed = YAML(typ="safe").load((root / name).read_text(encoding="utf-8"))
        assert read_yaml(root / name) == parsed, name
        assert read_yaml(root / name) == parsed, name  # the second comes from the cache
    assert len(list(cache.glob("*.json"))) == len(names)
