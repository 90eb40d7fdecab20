"""Bilingual text: filling placeholders and reading message catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tutor.i18n import T, load_messages


def test_a_text_value_fills_each_language_with_its_own_string() -> None:
    filled = T("{what} at line {line}", "第 {line} 行：{what}").format(
        what=T("an error", "一个错误"), line=3
    )
    assert filled == T("an error at line 3", "第 3 行：一个错误")


def test_a_catalog_needs_both_languages(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text('hello: {en: "Hi {name}", zh: "你好 {name}"}\n', encoding="utf-8")
    assert load_messages(good)["hello"].format(name="x") == T("Hi x", "你好 x")
    bad = tmp_path / "bad.yaml"
    bad.write_text("hello: {en: Hi}\n", encoding="utf-8")
    with pytest.raises(ValidationError):
        load_messages(bad)
