"""Bilingual text: filling placeholders, reading message catalogs, English counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.errors import TutorError
from tutor.i18n import (
    Catalog,
    T,
    as_lang,
    counted,
    default_lang,
    load_messages,
    plural,
)


def test_a_text_value_fills_each_language_with_its_own_string() -> None:
    filled = T("{what} at line {line}", "第 {line} 行：{what}").format(
        what=T("an error", "一个错误"), line=3
    )
    assert filled == T("an error at line 3", "第 3 行：一个错误")


def test_a_catalog_needs_both_languages(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text('hello: {en: "Hi {name}", zh: "你好 {name}"}\n', encoding="utf-8")
    assert load_messages(good)["hello"].format(name="x") == T("Hi x", "你好 x")
    for body in ("hello: {en: Hi}\n", "hello: {en: Hi, zh: 你好, fr: Salut}\n",
                 "hello: Hi\n", "hello: {en: Hi, zh: 3}\n", "- a list\n"):
        bad = tmp_path / "bad.yaml"
        bad.write_text(body, encoding="utf-8")
        with pytest.raises(ValueError, match=r"bad\.yaml"):
            load_messages(bad)


def test_a_catalog_is_read_on_first_use_and_once(tmp_path: Path) -> None:
    path = tmp_path / "words.yaml"
    catalog = Catalog(path)  # no file yet: nothing is read until a message is asked for
    path.write_text('hello: {en: "Hi {name}", zh: "你好 {name}"}\nbye: {en: Bye, zh: 再见}\n',
                    encoding="utf-8")
    assert catalog("hello", name="x") == T("Hi x", "你好 x")
    path.write_text("bye: {en: Later, zh: 回头见}\n", encoding="utf-8")
    assert catalog("bye") == T("Bye", "再见")  # read once
    assert "hello" in catalog and "nope" not in catalog


def test_a_placeholder_may_be_named_key(tmp_path: Path) -> None:
    """``tutor watch`` says "Unknown key {key!r}.": the message's own name is positional."""
    path = tmp_path / "words.yaml"
    path.write_text('unknown: {en: "Unknown key {key!r}.", zh: "未知按键 {key!r}。"}\n',
                    encoding="utf-8")
    assert Catalog(path)("unknown", key="x") == T("Unknown key 'x'.", "未知按键 'x'。")


def test_english_counts() -> None:
    assert [plural(n, "lesson") for n in (0, 1, 2)] == ["0 lessons", "1 lesson", "2 lessons"]
    assert plural(2, "submission", "submissions") == "2 submissions"
    assert plural(3, "child", "children") == "3 children"


def test_a_count_fills_english_with_its_noun_and_chinese_with_the_number() -> None:
    entry = T("{lessons} ready", "{lessons} 个课程已就绪")
    assert [entry.format(lessons=counted(n, "lesson")) for n in (1, 2)] == [
        T("1 lesson ready", "1 个课程已就绪"), T("2 lessons ready", "2 个课程已就绪")]
    assert counted(0, "child", "children") == T("0 children", "0")


def test_a_language_is_en_or_zh(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [as_lang(v) for v in ("en", "zh", "fr", None, "")] == ["en", "zh", None, None, None]
    monkeypatch.setenv("TUTOR_LANG", " ZH ")
    assert default_lang() == "zh"
    monkeypatch.setenv("TUTOR_LANG", "fr")
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert default_lang() == "zh"


def test_an_error_speaks_both_languages() -> None:
    error = TutorError(T("no such step", "没有这个步骤"), hint="tutor lessons")
    assert (error.message_in("zh"), error.hint_in("zh")) == ("没有这个步骤", "tutor lessons")
    assert str(error) == "no such step\n  hint: tutor lessons"
    assert TutorError("plain").hint_in("en") is None


def _catalog_files() -> list[Path]:
    """Every YAML file in the package that is a catalog: keys mapping to {en, zh}."""
    from tutor.yaml_read import read_yaml

    root = Path(__file__).resolve().parents[1] / "tutor"
    found = []
    for path in sorted(root.rglob("*.yaml")):
        if "bundled_lessons" in path.parts:
            continue
        data = read_yaml(path)
        if isinstance(data, dict) and data and all(
                isinstance(v, dict) and v.keys() == {"en", "zh"}
                and all(isinstance(t, str) for t in v.values()) for v in data.values()):
            found.append(path)
    return found


def test_the_catalogs_are_found() -> None:
    names = {p.name for p in _catalog_files()}
    assert {"lint_messages.yaml", "messages.yaml", "progress_messages.yaml"} <= names


@pytest.mark.parametrize("path", _catalog_files(), ids=lambda p: p.parent.name + "/" + p.name)
def test_both_languages_of_a_message_take_the_same_placeholders(path: Path) -> None:
    import string

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    wrong = {key: (fields(t.en), fields(t.zh)) for key, t in load_messages(path).items()
             if fields(t.en) != fields(t.zh)}
    assert wrong == {}


def _catalog_calls(path: Path) -> list[tuple[int, str, str, bool]]:
    """(line, catalog module, key or key prefix, whether a prefix) of each ``msg(...)`` call
    in ``path`` whose ``msg`` is a module's :class:`Catalog` (imported, or a module imported
    and ``module.msg``), with a literal key, an f-string's literal start, or a choice of two."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = ".".join(path.relative_to(Path(__file__).resolve().parents[1]).with_suffix("").parts)
    catalogs: dict[str, str] = {}  # name in this file -> module whose ``msg`` it is
    modules: dict[str, str] = {}  # a module imported under this name
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tutor"):
            for alias in node.names:
                if alias.name == "msg":
                    catalogs[alias.asname or "msg"] = node.module
                else:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and getattr(node.value.func, "id", None) == "Catalog"):
            catalogs.update({t.id: own for t in node.targets if isinstance(t, ast.Name)})

    def keys(arg: ast.expr) -> list[tuple[str, bool]]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return [(arg.value, False)]
        if isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
            return [(str(arg.values[0].value), True)]
        if isinstance(arg, ast.IfExp):
            return keys(arg.body) + keys(arg.orelse)
        return []

    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func, module = node.func, None
        if isinstance(func, ast.Name):
            module = catalogs.get(func.id)
        elif (isinstance(func, ast.Attribute) and func.attr == "msg"
              and isinstance(func.value, ast.Name)):
            module = modules.get(func.value.id)
        if module is not None:
            found += [(node.lineno, module, key, prefix) for key, prefix in keys(node.args[0])]
    return found


def test_every_key_the_code_asks_a_catalog_for_is_in_it() -> None:
    """Words moved out of code into a catalog are looked up by key: a key spelt wrong would
    fail only when that message is shown."""
    import importlib

    root = Path(__file__).resolve().parents[1]
    missing, asked = [], 0
    for path in sorted((root / "tutor").rglob("*.py")):
        for line, module, key, prefix in _catalog_calls(path):
            catalog = getattr(importlib.import_module(module), "msg", None)
            if not isinstance(catalog, Catalog):
                continue
            asked += 1
            texts = catalog.texts()
            if not (any(k.startswith(key) for k in texts) if prefix else key in texts):
                missing.append(f"{path.relative_to(root)}:{line}: {key}{'...' if prefix else ''}")
    assert asked > 150  # the finder sees the calls (cli, course, grading, progress, ...)
    assert missing == []
