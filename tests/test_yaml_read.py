"""The app's own YAML data files, read by ``tutor.yaml_read.read_yaml``: plain data, errors at
``path:line:col``, nothing written anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tutor import yaml_read
from tutor.yaml_read import YamlFileError, read_yaml

PACKAGE = Path(yaml_read.__file__).parent


def _data_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.yaml") if "bundled_lessons" not in p.parts)


def test_there_are_data_files_to_read() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in _data_files()}
    assert {"diagnosis/catalog.yaml", "grading/messages.yaml", "chat/intents.yaml"} <= names


@pytest.mark.parametrize("path", _data_files(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_bundled_data_file_reads_as_pyyaml_reads_it(path: Path) -> None:
    """The files hold nothing on which YAML 1.1 (PyYAML's safe loader) and 1.2 differ."""
    assert read_yaml(path) == yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)


def test_a_syntax_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("greeting:\n  en: hello\n  zh: [unclosed\n", encoding="utf-8")
    with pytest.raises(YamlFileError) as caught:
        read_yaml(path)
    assert caught.value.path == path
    assert str(caught.value).startswith(f"{path}:{caught.value.line}:{caught.value.col}: ")
    assert caught.value.line >= 3
    assert caught.value.text.zh  # the reason in both languages


def test_a_duplicate_key_is_an_error_at_the_second(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("a: 1\nb: 2\na: 3\n", encoding="utf-8")
    with pytest.raises(YamlFileError, match=r"dup.yaml:3:1: duplicate key 'a' \(first on line 1\)"):
        read_yaml(path)


def test_text_that_is_not_utf8_is_placed_at_its_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"a: 1\nname: caf\xe9\n")
    with pytest.raises(YamlFileError, match=r"latin.yaml:2:10: not UTF-8 text \(byte 0xe9\)"):
        read_yaml(path)


def test_a_file_over_the_size_cap_is_refused_unparsed(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * yaml_read.MAX_BYTES + "\n", encoding="utf-8")
    monkeypatch.setattr(yaml_read, "load", lambda text: pytest.fail("parsed"))
    with pytest.raises(YamlFileError, match=r"big.yaml:1:1: the file is 2.0 MB"):
        read_yaml(path)


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_yaml(tmp_path / "missing.yaml")


def test_reading_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No parse cache of its own beside the lesson cache: the data is read from the file."""
    monkeypatch.setenv("TUTOR_CACHE_DIR", str(tmp_path / "cache"))
    for path in _data_files():
        read_yaml(path)
    assert not (tmp_path / "cache").exists()
