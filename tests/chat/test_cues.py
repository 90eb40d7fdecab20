"""Concept cues and synonyms: one token for many wordings of an idea, on both sides, so a
question and the lesson that teaches the idea meet however each words it."""

from __future__ import annotations

import pytest

from tutor.chat.cues import cue_tokens
from tutor.chat.models import Glossary, Passage
from tutor.chat.retrieval import Retriever
from tutor.i18n import T


@pytest.mark.parametrize(
    "text",
    [
        "the loss blows up after a few epochs and the grads get larger each iteration",
        "gradients pile up again on the second call",
        "每一轮梯度都越来越大",
        "梯度在循环里重复累加",
    ],
)
def test_growth_over_repetition_is_recognised_in_many_wordings(text: str) -> None:
    tokens = cue_tokens(text)
    assert "~grows" in tokens and "~repeats" in tokens


def test_growth_without_repetition_is_only_growth() -> None:
    assert cue_tokens("my model is bigger than yours") == ["~grows"]


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("y.backward(v)", True),
        ("what do I hand to backward when the output is a matrix", True),
        ("z.backward(gradient=torch.ones_like(z))", True),
        ("backward 里传进去的那个张量是干什么的", True),
        ("z.backward()", False),
        ("backward runs the chain rule", False),
    ],
)
def test_an_argument_to_backward_is_one_idea(text: str, cue: bool) -> None:
    assert ("~backward_argument" in cue_tokens(text)) is cue


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("must I figure the derivatives out on paper", True),
        ("working gradients out by hand is error-prone", True),
        ("我得自己手算导数吗", True),
        ("a gradient-descent step by hand", False),  # updating weights is another idea
        ("手动梯度下降", False),
    ],
)
def test_derivatives_by_hand_is_not_updating_by_hand(text: str, cue: bool) -> None:
    assert ("~manual_derivative" in cue_tokens(text)) is cue


def _passage(lesson: str, text: str) -> Passage:
    return Passage(
        id=f"{lesson}/intro",
        source="lesson",
        lesson_id=lesson,
        step_id="intro",
        title=T(lesson, lesson),
        text=T(text, text),
    )


def test_a_question_reaches_the_lesson_that_words_the_idea_differently() -> None:
    glossary = Glossary(entries=[], synonyms={"derivatives": "gradient"})
    passages = [
        _passage("accumulation", "Each backward call adds to .grad, so it doubles on a re-run."),
        _passage("norm", "The norm of a vector: square, sum and take the root in a loop."),
    ]
    retriever = Retriever.build(passages, glossary)
    found = retriever.retrieve("why does .grad keep getting larger every time the loop runs")
    assert found.lessons[0] == "accumulation"


def test_synonyms_apply_to_the_indexed_text_too() -> None:
    """A lesson that says "derivatives" is found by a question that says "gradient" (the
    question side always mapped; the index side did not)."""
    glossary = Glossary(entries=[], synonyms={"derivatives": "gradient"})
    passages = [
        _passage("backward", "Autograd computes derivatives for you."),
        _passage("other", "Tensors live on devices."),
    ]
    retriever = Retriever.build(passages, glossary)
    assert retriever.retrieve("who computes the gradient").lessons[0] == "backward"


@pytest.mark.parametrize(
    ("text", "cues"),
    [
        # keeping values across iterations, and the memory it costs
        ("i store every loss in a list and RAM keeps going up", {"~keeps_values", "~memory"}),
        ("logging the losses makes the GPU memory explode", {"~keeps_values", "~memory"}),
        ("把每步的 loss 存到列表里，内存越来越大", {"~keeps_values", "~memory"}),
        ("显存一直涨", {"~memory", "~grows"}),
        # the gradient handed back instead of stored
        ("can backward return the gradients to me", {"~returns_gradient"}),
        (
            "I want the grads returned, instead of accumulating them into .grad",
            {"~returns_gradient"},
        ),
        ("能不能直接返回梯度", {"~returns_gradient"}),
        ("梯度不要存到 .grad", {"~returns_gradient"}),
        # sizes multiplied out
        ("why 16 * 5 * 5 inputs", {"~shape_arithmetic"}),
        ("my image is 3x224x224", {"~shape_arithmetic"}),
        # everything at once
        ("a cheat sheet of the whole process", {"~overview"}),
        ("把整个流程从头梳理一下顺序", {"~overview"}),
        # a derivative's value at a point; a tensor that already exists
        ("the slope at x = 2", {"~derivative_value"}),
        ("dy/dx of my function", {"~derivative_value"}),
        ("求在 x=1 处的导数", {"~derivative_value"}),
        ("I already have the tensor, must I recreate it", {"~after_creation"}),
        ("张量已经建好了", {"~after_creation"}),
    ],
)
def test_new_ideas_are_recognised_in_many_wordings(text: str, cues: set[str]) -> None:
    assert cues <= set(cue_tokens(text))


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("backward returns None", "~returns_gradient"),
        ("return x * 2 from forward", "~returns_gradient"),
        ("the gradient has the shape 2x", "~shape_arithmetic"),
        ("x = 5 * 3", "~shape_arithmetic"),
        ("the whole tensor requires grad", "~overview"),
        ("the same memory address", "~keeps_values"),
        ("gradient descent with lr = 0.1", "~derivative_value"),
        ("backward 之后 grad 是 None", "~after_creation"),
    ],
)
def test_the_new_ideas_do_not_fire_on_their_neighbours(text: str, cue: str) -> None:
    assert cue not in cue_tokens(text)
