"""Every catalog entry has a run-independent summary in both languages: the tutor chat reads
it as general advice, where no run fills the templates' placeholders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor.diagnosis import load_catalog
from tutor.diagnosis.catalog import CatalogError, parse_catalog, placeholders

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("entry", load_catalog().entries, ids=lambda e: e.id)
def test_every_entry_has_a_summary_in_both_languages(entry) -> None:
    assert entry.summary is not None, f"{entry.id}: no summary"
    en, zh = entry.summary.en.strip(), entry.summary.zh.strip()
    assert en and zh
    assert CJK.search(zh), f"{entry.id}: zh summary has no Chinese: {zh!r}"
    assert not CJK.search(en), f"{entry.id}: en summary has Chinese: {en!r}"
    assert not placeholders(en) and not placeholders(zh)
    assert "…" not in en + zh


def test_a_summary_with_a_placeholder_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(
        """entries:
- id: x
  severity: error
  match: {exception: [RuntimeError], message: "boom"}
  title: "t"
  explanation: {en: "e", zh: "解释"}
  fix: {en: "f", zh: "修改"}
  lesson_ref: graph/intro
  summary: {en: "{var} broke", zh: "{var} 坏了"}
""",
        encoding="utf-8",
    )
    with pytest.raises(CatalogError, match="summary"):
        parse_catalog(path)
