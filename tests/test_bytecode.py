"""tutor writes its own bytecode where Python is told not to (``tutor.bytecode``)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from tutor.bytecode import PACKAGE_DIR, compile_package


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "a.py").write_text("A = 1\n", encoding="utf-8")
    (root / "sub" / "b.py").write_text("B = 2\n", encoding="utf-8")
    return root


def cached(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_writes_missing_bytecode_where_python_would_not(package, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not cached(package / "a.py").exists()
    assert compile_package(package) is True
    for source in (package / "__init__.py", package / "a.py", package / "sub" / "b.py"):
        assert cached(source).is_file(), source


def test_up_to_date_bytecode_is_left_alone_and_stale_rewritten(package, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    compile_package(package)
    a, b = cached(package / "a.py"), cached(package / "sub" / "b.py")
    a_before, b_before = a.read_bytes(), b.stat().st_mtime_ns
    edited = package / "a.py"
    edited.write_text("A = 'a longer module now'\n", encoding="utf-8")
    later = edited.stat().st_mtime + 5  # compileall compares whole seconds
    os.utime(edited, (later, later))
    assert compile_package(package) is True
    assert a.read_bytes() != a_before  # the edited module's bytecode follows its source
    assert b.stat().st_mtime_ns == b_before  # the other is not written again


def test_nothing_to_do_where_python_writes_bytecode_itself(package, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert compile_package(package) is None
    assert not cached(package / "a.py").exists()


def test_an_unwritable_folder_or_a_broken_module_is_not_an_error(package, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (package / "sub" / "__pycache__").write_text("a file where the folder would go")
    (package / "broken.py").write_text("def (:\n", encoding="utf-8")
    assert compile_package(package) is False
    assert cached(package / "a.py").is_file()  # the rest is still compiled


def test_the_default_is_the_tutor_package() -> None:
    assert Path(__file__).resolve().parents[1] / "tutor" == PACKAGE_DIR
