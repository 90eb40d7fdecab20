"""The catalog is valid data: enough entries, both languages, known placeholders, refs that
resolve in the bundled course, and clear errors for a broken file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor.diagnosis import load_catalog
from tutor.diagnosis.catalog import CatalogError, parse_catalog

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_catalog_has_at_least_thirty_distinct_diagnoses() -> None:
    catalog = load_catalog()
    ids = [e.id for e in catalog.entries]
    assert len(ids) == len(set(ids))
    assert len(catalog.errors) >= 30
    assert {e.pitfall for e in catalog.pitfalls} == {
        "missing-zero-grad", "data-attribute", "nonleaf-grad-read", "backward-in-no-grad",
        "requires-grad-too-late", "result-discarded", "state-dict-kept", "normalize-precedence",
    }
    assert catalog.warnings


@pytest.mark.parametrize("entry", load_catalog().entries, ids=lambda e: e.id)
def test_every_entry_is_written_in_both_languages(entry) -> None:
    for text in (entry.title, entry.explanation, entry.fix):
        assert text.en.strip() and text.zh.strip()
        assert CJK.search(text.zh), f"{entry.id}: zh text has no Chinese: {text.zh!r}"
        assert not CJK.search(text.en), f"{entry.id}: en text has Chinese: {text.en!r}"


def test_every_lesson_ref_resolves_in_the_bundled_course() -> None:
    course_loader = pytest.importorskip("tutor.course.loader")
    course = course_loader.load_course()
    missing = []
    for entry in load_catalog().entries:
        try:
            course.find(entry.lesson_ref)
        except KeyError:
            missing.append(f"{entry.id} -> {entry.lesson_ref}")
    assert not missing, missing


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(body, encoding="utf-8")
    return path


ENTRY = """entries:
- id: {id}
  severity: error
  match:
    exception: [RuntimeError]
    message: "{regex}"
  title: "{title}"
  explanation: {{en: "e", zh: "解释"}}
  fix: {{en: "f", zh: "修改"}}
  lesson_ref: graph/intro
"""


def test_a_valid_minimal_file_parses(tmp_path: Path) -> None:
    catalog = parse_catalog(_write(tmp_path, ENTRY.format(id="x", regex="boom (?P<n>\\\\d+)",
                                                          title="{n} and {var}")))
    assert catalog.get("x").match.pattern().search("boom 3")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"id": "x", "regex": "ok", "title": "uses {nope}"}, "unknown placeholders"),
        ({"id": "x", "regex": "bad(", "title": "t"}, "bad regex"),
        ({"id": "Bad Id", "regex": "ok", "title": "t"}, "id"),
        # a shape placeholder brings its own parentheses: [{shape}] would print [(3,)]
        ({"id": "x", "regex": "ok", "title": "has shape [{shape}]"}, "wraps {shape} in brackets"),
    ],
)
def test_a_broken_file_names_the_file_and_the_problem(
    tmp_path: Path, fields: dict[str, str], problem: str
) -> None:
    path = _write(tmp_path, ENTRY.format(**fields))
    with pytest.raises(CatalogError) as caught:
        parse_catalog(path)
    assert str(path) in str(caught.value)
    assert problem in str(caught.value)


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    one = ENTRY.format(id="x", regex="a", title="t")
    two = one + one.removeprefix("entries:\n")
    with pytest.raises(CatalogError, match="duplicate diagnosis id 'x'"):
        parse_catalog(_write(tmp_path, two))


def test_unreadable_yaml_is_a_catalog_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read"):
        parse_catalog(_write(tmp_path, "entries: [\n  - {"))


def test_shape_groups_must_exist_and_are_never_bracketed(tmp_path: Path) -> None:
    regex_line = '    message: "{regex}"\n'
    shaped = ENTRY.replace(regex_line, regex_line + "    shapes: [size]\n")
    ok = shaped.format(id="x", regex="size \\\\[(?P<size>[^\\\\]]*)\\\\]", title="got {size}")
    assert parse_catalog(_write(tmp_path, ok)).get("x").match.shapes == ["size"]
    with pytest.raises(CatalogError, match="groups the regex does not have"):
        parse_catalog(_write(tmp_path, shaped.format(id="x", regex="no group", title="t")))
    with pytest.raises(CatalogError, match=r"wraps \{size\} in brackets"):
        parse_catalog(_write(tmp_path, shaped.format(
            id="x", regex="size (?P<size>.*)", title="got （{size}）")))


def test_a_variant_is_checked_like_the_entry_it_belongs_to(tmp_path: Path) -> None:
    entry = ENTRY.format(id="x", regex="boom", title="{var} failed")
    variants = """  variants:
  - explanation: {en: "e, said another way", zh: "换一种说法的解释"}
  - fix: {en: "uses {nope}", zh: "用了 {nope}"}
"""
    with pytest.raises(CatalogError, match="unknown placeholders"):
        parse_catalog(_write(tmp_path, entry + variants))
    fitting = variants.replace("{nope}", "{var}")
    got = parse_catalog(_write(tmp_path, entry + fitting)).get("x")
    assert [t.en for t in got.options("explanation")] == ["e", "e, said another way"]
    assert [t.en for t in got.options("fix")] == ["f", "uses {var}"]


def test_every_evidence_step_is_one_a_check_names() -> None:
    """A step no check names is dead data (a check removed, its words left behind)."""
    source = "\n".join(p.read_text(encoding="utf-8")
                       for p in (Path(__file__).parents[2] / "tutor").rglob("*.py"))
    unnamed = [key for key in load_catalog().steps
               if f'"{key}"' not in source and f"'{key}'" not in source]
    assert unnamed == []


def test_a_label_dtype_title_does_not_contradict_itself(sandbox) -> None:  # type: ignore[no-untyped-def]
    """int32 labels are integers: "must be integers, not Int" read as nonsense."""
    from tutor.diagnosis import explain

    code = ("import torch\nimport torch.nn.functional as F\n"
            "F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 1], dtype=torch.int32))\n")
    first = explain(sandbox.run(code), code)[0]
    assert first.id == "ce-target-dtype"
    assert first.title.en == "Class labels for the loss must be int64 (Long), not Int"
