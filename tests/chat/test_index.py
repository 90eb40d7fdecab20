"""The prepared index: concept documents per lesson, passage topics, and the disk cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import tutor.chat.index as index_mod
from tutor.chat import Tutor
from tutor.chat.concepts import lesson_document, load_concepts
from tutor.chat.index import IndexData, build_index, cache_key, load_index
from tutor.chat.models import Passage
from tutor.chat.passages import load_glossary
from tutor.chat.retrieval import Retriever
from tutor.course import load_course
from tutor.course.models import Course
from tutor.i18n import T


def test_every_bundled_lesson_has_a_bilingual_concept_description() -> None:
    concepts = load_concepts()
    lessons = {lesson.id for lesson in load_course().lessons}
    assert set(concepts.lessons) == lessons
    for concept in concepts.lessons.values():
        assert len(concept.about.en) > 80 and len(concept.about.zh) > 30


def test_a_lesson_document_names_the_concept_not_the_exercises(course: Course) -> None:
    lesson = course.lesson("backward")
    concept = load_concepts().lessons["backward"]
    doc = lesson_document(lesson, concept)
    assert "Calling backward" in doc and concept.about.zh in doc
    assert "Gradient of a cube" in doc  # step titles say what is practised
    assert "[2., 5.]" not in doc  # an exercise's prompt details are not the concept


def _catalog_passage(ref: str) -> Passage:
    return Passage(
        id="catalog:copy",
        source="catalog",
        lesson_id=ref,
        title=T("Values taken out of the graph", "从计算图里拿出来的值"),
        text=T("detach gives the same values without history", "detach 返回没有历史的相同数值"),
        pattern=r"cannot take values out",
    )


def test_a_catalog_entry_belongs_mostly_to_the_lesson_its_words_are_about() -> None:
    glossary = load_glossary()
    docs = {
        "backward": "backward fills .grad of the leaves, chain rule",
        "detach": "detach: same values without history, out of the graph",
    }
    data = build_index([_catalog_passage("backward")], glossary, docs)
    topic = data.topics[0]
    assert sum(topic.values()) == pytest.approx(1.0)
    assert topic["detach"] > topic["backward"] > 0  # its lesson_ref keeps a share


def test_questions_in_plain_words_reach_the_concept_and_pasted_errors_the_entry() -> None:
    glossary = load_glossary()
    docs = {
        "backward": "compute derivatives automatically, fills .grad",
        "detach": "get plain numbers out of a tracked tensor for plotting or printing",
    }
    lesson = Passage(
        id="backward/intro",
        source="lesson",
        lesson_id="backward",
        step_id="intro",
        title=T("Backward", "反向"),
        text=T("Call backward on a scalar.", "对标量调用 backward。"),
    )
    retriever = Retriever.build([lesson, _catalog_passage("backward")], glossary, docs)
    found = retriever.retrieve("how can I get the numbers out so I can plot them")
    assert found.lessons[0] == "detach"
    pasted = retriever.retrieve("RuntimeError: cannot take values out here")
    assert pasted.hits[0].passage.id == "catalog:copy"
    assert "fused" in retriever.explain("why plot numbers")


def test_the_index_is_cached_on_disk_and_read_back(
    course: Course, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_index(course, tmp_path)
    files = list(tmp_path.glob("index-*.json"))
    assert len(files) == 1 and cache_key(course)[:24] in files[0].name

    def no_build(_: Course) -> IndexData:
        raise AssertionError("rebuilt although a cache of the same sources exists")

    monkeypatch.setattr(index_mod, "_build_default", no_build)
    assert load_index(course, tmp_path) == first


def test_a_changed_course_gets_a_new_index(course: Course) -> None:
    lessons = [course.lessons[0]]
    smaller = Course(lessons=lessons)
    assert cache_key(smaller) != cache_key(course)


def test_a_broken_or_unwritable_cache_is_only_a_slower_start(
    course: Course, tmp_path: Path
) -> None:
    data = load_index(course, tmp_path)
    cached = next(tmp_path.glob("index-*.json"))
    cached.write_text("{not json", encoding="utf-8")
    assert load_index(course, tmp_path) == data  # rebuilt ...
    assert IndexData.model_validate_json(cached.read_bytes()) == data  # ... and rewritten
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    assert load_index(course, blocked / "sub") == data  # cannot write there: no cache, no error


def test_a_catalog_entry_answers_only_a_question_that_quotes_or_names_it() -> None:
    # an entry explains one error: sharing a plain word with it ("epoch") is another question
    glossary = load_glossary()
    entry = Passage(
        id="catalog:resumed",
        source="catalog",
        lesson_id="backward",
        title=T("KeyError 'initial_lr'", "KeyError 'initial_lr'"),
        text=T("A scheduler given last_epoch over a fresh optimizer.",
               "对新建的优化器传了 last_epoch。"),
        pattern=r"param 'initial_lr' is not specified",
    )
    retriever = Retriever.build([entry], glossary, {"backward": "fills .grad"})
    assert not retriever.speaks_of(entry, "one epoch on the GPU takes five hours, why so slow?")
    assert retriever.speaks_of(entry, "I resume and get KeyError: 'initial_lr'")
    assert retriever.speaks_of(entry, "param 'initial_lr' is not specified in param_groups[0]")
    assert retriever.speaks_of(entry, "how do I pass last_epoch when I resume?")
    lesson = Passage(id="backward/intro", source="lesson", lesson_id="backward",
                     step_id="intro", title=T("Backward", "反向"),
                     text=T("epoch", "epoch"))
    assert retriever.speaks_of(lesson, "one epoch takes five hours")


def test_a_question_that_shares_only_a_plain_word_with_an_error_gets_no_error_entry(
        tutor: Tutor) -> None:
    for question in ("Training takes forever: one epoch on the GPU takes five hours, what "
                     "am I doing wrong?",
                     "训练时间超长，在gpu下一个epoch要五个小时，是我哪里不对？"):
        answer = tutor.ask(question)
        assert not any(s.startswith("catalog:") for s in answer.sources), answer.sources
