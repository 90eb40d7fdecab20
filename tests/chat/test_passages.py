"""What the tutor indexes: lesson text (never solutions or hints), the glossary and the
diagnosis catalog."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tutor.chat.passages import (
    catalog_passages,
    course_passages,
    glossary_passages,
    load_catalog_entries,
    load_glossary,
)
from tutor.course import load_course
from tutor.course.models import Course
from tutor.i18n import T, Text


def test_solutions_and_hints_are_never_indexed(course: Course) -> None:
    passages = course_passages(course)
    assert {p.id for p in passages} == {"backward/intro", "backward/cube", "detach/intro"}
    everything = " ".join(p.text.en + p.text.zh + (p.code or "") for p in passages)
    assert "(w ** 3)" not in everything and "Reduce to one number" not in everything


def test_reading_code_becomes_the_passage_example(course: Course) -> None:
    intro = next(p for p in course_passages(course) if p.id == "backward/intro")
    assert intro.code is not None and "backward()" in intro.code


def test_glossary_is_bilingual_and_covers_the_autograd_apis() -> None:
    glossary = load_glossary()
    terms = {t for e in glossary.entries for t in e.terms}
    for api in (
        "requires_grad",
        "backward",
        ".grad",
        "grad_fn",
        "is_leaf",
        "detach",
        "no_grad",
        "retain_graph",
        "zero_grad",
        "norm",
        "nn.Module",
        "parameters",
        "view",
        "torch.mm",
        "item",
        "numpy",
        "optimizer.step",
        "gradient",
        "device",
    ):
        assert api in terms, api
    for entry in glossary.entries:
        assert entry.text.en.strip() and entry.text.zh.strip() and entry.code, entry.id
        assert entry.text.en != entry.text.zh, entry.id
    assert len(glossary_passages(glossary)) == len(glossary.entries)


def test_glossary_lessons_and_guiding_questions_exist_in_the_bundled_course() -> None:
    glossary = load_glossary()
    course = load_course()
    lesson_ids = {lesson.id for lesson in course.lessons}
    step_refs = {f"{lesson.id}/{step.id}" for lesson in course.lessons for step in lesson.steps}
    referenced = {e.lesson for e in glossary.entries} | set(glossary.guiding_questions)
    # a guiding question keyed LESSON/STEP is that step's own
    missing = referenced - lesson_ids - step_refs
    if missing and len(lesson_ids) < 13:
        pytest.skip(f"course still being written; not yet there: {sorted(missing)}")
    assert not missing


@dataclass
class _Entry:
    id: str
    title: Text
    explanation: Text
    fix: Text
    lesson_ref: str


def test_catalog_templates_read_as_general_advice() -> None:
    entry = _Entry(
        "x",
        T("{var} has shape {shape}", "{var} 的形状是 {shape}"),
        T("Call {var_code}.sum().", "调用 {var_code}.sum()。"),
        T("Reduce {var}.", "归约 {var}。"),
        "non-scalar/intro",
    )
    (passage,) = catalog_passages([entry])
    assert passage.title.en == "`x` has shape (2,)"
    assert passage.text.en == "Call x.sum().\n\nReduce `x`."
    assert "{" not in passage.text.en + passage.text.zh
    assert (passage.lesson_id, passage.step_id) == ("non-scalar", "intro")


def test_the_real_catalog_is_indexed() -> None:
    entries = load_catalog_entries()
    if not entries:
        pytest.skip("diagnosis catalog not available yet")
    passages = catalog_passages(entries)
    assert len(passages) == len(entries)
    assert all(p.lesson_id for p in passages)
    assert any("scalar outputs" in p.keywords for p in passages)


def test_a_catalog_summary_replaces_the_run_template() -> None:
    @dataclass
    class _WithSummary(_Entry):
        summary: Text

    entry = _WithSummary(
        "x",
        T("{var} is not a scalar", "{var} 不是标量"),
        T("On line {line}, {var} has shape {shape}.", "第 {line} 行，{var} 的形状是 {shape}。"),
        T("Reduce {var}.", "归约 {var}。"),
        "non-scalar/intro",
        T("backward() needs a scalar.", "backward() 需要标量。"),
    )
    (passage,) = catalog_passages([entry])
    assert passage.text.en.startswith("backward() needs a scalar.")
    assert passage.text.zh.startswith("backward() 需要标量。")
    assert "line" not in passage.text.en and "…" not in passage.text.en


def test_a_template_naming_one_run_is_not_shown_with_gaps() -> None:
    """A placeholder with no neutral stand-in ({line}, {module}) once became "第 … 行的
    `….eval()`" in a chat answer: the title falls back to the summary's first clause, the
    fix is left out, and an entry with nothing general to say is not indexed."""

    @dataclass
    class _WithSummary(_Entry):
        summary: Text

    entry = _WithSummary(
        "x",
        T("`{module}.eval()` on line {line} is never undone", "第 {line} 行的 `{module}.eval()`"),
        T("eval() switches {detail} off.", "eval() 会关掉 {detail}。"),
        T("Call `{module}.train()`.", "调用 `{module}.train()`。"),
        "no-grad/intro",
        T(
            "eval() stays in force until train(): call train() again.",
            "eval() 会一直生效直到调用 train()：请再调用 train()。",
        ),
    )
    (passage,) = catalog_passages([entry])
    # the summary's first clause heads it, the rest follows (not repeated)
    assert passage.title == T(
        "eval() stays in force until train()", "eval() 会一直生效直到调用 train()"
    )
    assert passage.text == T("Call train() again.", "请再调用 train()。")
    # the index still reads the entry's own words, the names of the run left out
    assert passage.indexed_title is not None and "never undone" in passage.indexed_title.en
    assert "{" not in passage.indexed_title.en and "train()" in passage.keywords
    no_summary = _Entry("y", entry.title, entry.explanation, entry.fix, "no-grad/intro")
    assert catalog_passages([no_summary]) == []


def test_no_catalog_passage_has_a_gap() -> None:
    passages = catalog_passages(load_catalog_entries())
    assert passages
    for p in passages:
        shown = p.title.en + p.title.zh + p.text.en + p.text.zh
        assert "…" not in shown and "{" not in shown, p.id
