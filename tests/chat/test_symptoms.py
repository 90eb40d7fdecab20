"""Symptom questions ("x.grad is None", "the grad keeps growing") are answered by their likely
causes, each with its lesson; what the question names decides which cause comes first. The
questions here are fresh wordings, none copied from a question set."""

from __future__ import annotations

import pytest

from tutor.chat import Tutor
from tutor.chat.symptoms import bundled_symptoms, load_symptoms
from tutor.course import load_course
from tutor.paths import cache_root


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    """The bundled course, glossary and diagnosis catalog (the causes live there)."""
    return Tutor(load_course())


def test_every_cause_resolves_to_a_passage_and_a_course_step(tutor: Tutor) -> None:
    passages = {p.id for p in tutor.retriever.passages}
    for symptom in load_symptoms().symptoms:
        for cause in symptom.causes:
            assert cause.ref in passages, f"{symptom.id}: {cause.ref}"
            if cause.lesson:
                tutor.course.find(cause.lesson)  # KeyError if the step is gone
        assert symptom.title.en and symptom.title.zh


def test_the_cached_symptoms_are_those_the_tutor_resolves_from_its_index(tutor: Tutor) -> None:
    # tutor ask answers a symptom from the cache (no index, no catalog, no pydantic): the
    # causes it reads there are the ones the Tutor resolves against its index's passages
    bundled_symptoms.cache_clear()
    built = bundled_symptoms()  # built and stored, unless an earlier test did
    assert list((cache_root() / "chat").glob("symptoms-*.json"))
    bundled_symptoms.cache_clear()
    cached = bundled_symptoms()  # read back from the cache
    assert cached is not built
    assert cached == built == load_symptoms().resolved(tutor.passages)
    assert all(c.title and c.text and c.lesson for s in cached.symptoms for c in s.causes)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        # no ingredient named: the usual cause (tracking was never asked for)
        ("why is my w.grad None after calling backward", "requires-grad"),
        ("为什么我的 x.grad 是 None", "requires-grad"),
        ("b.grad gives None even though the loss went backward fine", "requires-grad"),
        # the question names the ingredient of one cause
        ("q = p * 2 is an intermediate result and q.grad is None", "graph"),
        ("中间结果 q 的 grad 打印出来是 None", "graph"),
        ("after I detach the features, w1.grad stays None", "detach"),
        ("w.grad was None because i computed the loss under no_grad?", "no-grad"),
        ("right after optimizer.zero_grad() the weight's grad is None, not zeros", "accumulation"),
        ("p = torch.zeros(2, requires_grad=True).to('cuda'), later p.grad is None", "devices"),
        # grad_fn, not .grad
        ("我直接创建的张量 grad_fn 是 None，正常吗", "graph"),
        ("grad_fn is None for everything i compute inside torch.no_grad", "no-grad"),
        # growing gradients
        ("the gradient of my bias keeps growing every iteration", "accumulation"),
        ("b.grad went 1. then 2. then 3. without me changing anything", "accumulation"),
        ("偏置的梯度每轮都越来越大，是怎么回事", "accumulation"),
        ("why does my weight's grad get bigger and bigger each epoch", "accumulation"),
    ],
)
def test_a_symptom_goes_to_its_likely_cause(tutor: Tutor, question: str, first: str) -> None:
    answer = tutor.ask(question)
    assert answer.kind == "answer"
    assert answer.lessons[0] == first, tutor.retriever.explain(question)


def test_the_answer_lists_causes_with_a_lesson_each(tutor: Tutor) -> None:
    answer = tutor.ask("why is my w.grad None after calling backward")
    lines = answer.text.splitlines()
    numbered = [line for line in lines if line[:2] in {"1.", "2.", "3.", "4."}]
    assert len(numbered) >= 4
    assert answer.text.count("Read: lesson") >= 4
    for lesson in ("requires-grad", "graph", "detach", "no-grad"):
        assert f"({lesson})" in answer.text
    assert "…" not in answer.text and "{" not in answer.text
    assert any(s.startswith("catalog:") for s in answer.sources)


def test_a_chinese_symptom_is_answered_in_chinese(tutor: Tutor) -> None:
    answer = tutor.ask("为什么我的 x.grad 是 None")
    assert "常见原因" in answer.text and "参阅" in answer.text
    assert "Read:" not in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "x.grad is tensor([2., 4., 6.]), is that right for y = x**2?",  # a printed vector
        "what does grad_fn mean",
        "how do I read the gradient of a leaf",
    ],
)
def test_no_symptom_where_none_is_described(tutor: Tutor, question: str) -> None:
    assert tutor.symptoms.match(question) is None


def test_a_quoted_message_is_routed_by_the_catalog_not_by_the_symptom(tutor: Tutor) -> None:
    message = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    assert tutor.symptoms.match(tutor.retriever.without_quoted_messages(message)) is None
    assert tutor.ask(message).lessons[0] == "errors"


def test_every_remedy_lesson_is_a_course_step(tutor: Tutor) -> None:
    for symptom in load_symptoms().symptoms:
        for cause in symptom.causes:
            if cause.remedy:
                tutor.course.find(cause.remedy.lesson)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        # why: the graph lesson (non-leaves keep no .grad); how to keep it: backward (retain_grad)
        ("why does my hidden activation have .grad None after backward", "graph"),
        ("激活值 a 不是叶子，它的 .grad 为什么是 None", "graph"),
        ("is there a way to keep the gradient of an intermediate result? its .grad is None",
         "backward"),
        ("中间结果的 grad 是 None，有没有办法把它留下来", "backward"),
    ],
)
def test_a_non_leaf_grad_names_both_lessons_and_what_is_asked_first(
    tutor: Tutor, question: str, first: str
) -> None:
    answer = tutor.ask(question)
    assert answer.lessons[0] == first and {"graph", "backward"} <= set(answer.lessons)
    assert "graph/" in answer.text and "backward/" in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "printed w.grad three times: tensor([0.5000]) then tensor([1.]) then tensor([1.5000])",
        "w.grad 第一次 tensor([3., 3.])，再跑一次成了 tensor([6., 6.])",
        "every time i call backward the grad doubles, x stays the same",
        "b.grad went from 1 to 2 to 3 without me touching b",
    ],
)
def test_a_growing_gradient_shown_as_values_is_the_accumulation_symptom(
    tutor: Tutor, question: str
) -> None:
    found = tutor.symptoms.match(question)
    assert found is not None and found.symptom.id == "grad-grows"
    assert tutor.ask(question).lessons[0] == "accumulation"


@pytest.mark.parametrize(
    "question",
    [
        "x = torch.tensor([2., 2.], requires_grad=True); y = (x * 3).sum(); x.grad is 3",
        "the loss went 2.3 then 1.9 then 1.5, is that fine",
    ],
)
def test_values_that_are_not_a_growing_gradient_are_not_that_symptom(
    tutor: Tutor, question: str
) -> None:
    found = tutor.symptoms.match(question)
    assert found is None or found.symptom.id != "grad-grows"
