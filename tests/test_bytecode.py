"""tutor writes its own bytecode where Python is told not to (``tutor.bytecode``)."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

from tutor.bytecode import PACKAGE_DIR, compile_package, stale_modules


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


def test_a_read_only_install_is_left_alone(package, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != package)
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


def _module(name: str, source: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(source)
    module.__cached__ = str(cached(source))
    return module


def test_stale_modules_are_the_imported_tutor_modules_without_fresh_bytecode(
    package, monkeypatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    for name in list(sys.modules):  # only the fakes below are looked at
        if name == "tutor" or name.startswith("tutor."):
            monkeypatch.delitem(sys.modules, name)
    a, b = package / "a.py", package / "sub" / "b.py"
    monkeypatch.setitem(sys.modules, "tutor.fake_a", _module("tutor.fake_a", a))
    monkeypatch.setitem(sys.modules, "tutor.fake_b", _module("tutor.fake_b", b))
    monkeypatch.setitem(sys.modules, "elsewhere", _module("elsewhere", a))  # not tutor's
    assert stale_modules() == ["tutor.fake_a", "tutor.fake_b"]  # no bytecode at all
    compile_package(package)
    assert stale_modules() == []
    later = b.stat().st_mtime + 5
    os.utime(b, (later, later))  # edited since it was compiled
    assert stale_modules() == ["tutor.fake_b"]


@pytest.mark.parametrize(
    ("dont_write", "stale", "compiles"),
    [(True, ["tutor.x"], True), (True, [], False), (False, ["tutor.x"], False)],
)
def test_refresh_compiles_only_where_an_imported_module_needed_it(
    monkeypatch, dont_write, stale, compiles
) -> None:
    import tutor.bytecode as bytecode

    calls: list[bool] = []
    monkeypatch.setattr(sys, "dont_write_bytecode", dont_write)
    monkeypatch.setattr(bytecode, "stale_modules", lambda: stale)
    monkeypatch.setattr(bytecode, "compile_package", lambda: calls.append(True) or True)
    assert bytecode.refresh_bytecode() is (True if compiles else None)
    assert calls == ([True] if compiles else [])


def test_commands_refresh_bytecode_once_done_not_when_interrupted(monkeypatch, capsys) -> None:
    import tutor.cli as cli
    import tutor.cli.lessons_cmd as lessons_cmd

    calls: list[bool] = []
    monkeypatch.setattr(cli, "refresh_bytecode", lambda: calls.append(True))
    assert cli.main(["lessons"]) == 0
    assert calls == [True]

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(lessons_cmd, "run", interrupted)
    assert cli.main(["lessons"]) == 130
    assert calls == [True]
