"""kinds.yaml's ``words``: the several ways learners say a number goes up or down are one word
before a question is compared with the cards' forms ("rising" is "growing", "降不下来" is
"不下降"), so a card is found whatever verb the learner picked. Phrasings of our own."""

from __future__ import annotations

import pytest

from tutor.chat.cards import bundled_book, canonical
from tutor.chat.tokens import tokenize


@pytest.mark.parametrize(
    ("variant", "canonical_form"),
    [
        ("my loss keeps increasing", "my loss keeps growing"),
        ("the loss is rising", "the loss is growing"),
        ("loss goes down slowly", "loss decreases slowly"),
        ("显存不断上涨", "显存不断增长"),
        ("loss 降不下来", "loss 不下降"),
        ("内存越来越大", "显存增长"),
    ],
)
def test_variants_are_written_one_way(variant: str, canonical_form: str) -> None:
    assert tokenize(canonical(variant)) == tokenize(canonical(canonical_form))


def test_a_word_inside_another_is_left_alone() -> None:
    # whole English words only: "increaseLR" or "grad.rises_flag" are names, not verbs
    assert canonical("increase_lr(rises_flag)") == "increase_lr(rises_flag)"


@pytest.mark.parametrize(
    ("question", "card"),
    [
        ("my loss is rising every epoch, why?", "loss-goes-up"),
        ("loss 一直降不下来是什么原因", "loss-not-decreasing"),
    ],
)
def test_a_paraphrase_with_another_verb_finds_the_card(question: str, card: str) -> None:
    found = bundled_book().match(question)
    assert found is not None and found.card.id == card


@pytest.mark.parametrize(
    ("question", "card"),
    [
        # both sides are plain words to the anchors, and one card's sides name them
        ("view vs reshape, which one should I use?", "view-vs-reshape"),
        # one name but for its case: the sides cannot be told apart, a form asks it nearly
        # word for word
        ("torch.Tensor 和 torch.tensor 有什么区别", "torch-Tensor-vs-tensor"),
        # pairs a card now compares (32-comparisons.yaml)
        ("x.grad.zero_() vs x.grad = None?", "grad-zero-vs-none"),
        ("x += 1 vs x = x + 1 for autograd?", "inplace-vs-out-of-place-op"),
        (".to(device) 和 .cuda() 有区别吗", "to-device-vs-cuda"),
        ("model.parameters() 和 model.state_dict() 有什么区别", "parameters-vs-state-dict"),
    ],
)
def test_a_comparison_reaches_the_card_comparing_it(question: str, card: str) -> None:
    found = bundled_book().match(question)
    assert found is not None and found.card.id == card


def test_a_comparison_of_other_things_is_not_placed_in_pytorch() -> None:
    assert bundled_book().match("flask vs django, which one should I use?") is None


def test_a_yes_or_no_comes_from_a_card_about_what_is_asked() -> None:
    """'Is it safe to call zero_grad() between backward() and step()?' once got the clipping
    card's 'Yes' (shaped for safety questions, about clip_grad_norm and step): a card shaped
    for the kind must be about every asked name the best card is about."""
    found = bundled_book().match(
        "Is it safe to call optimizer.zero_grad() after loss.backward() but before "
        "optimizer.step()?")
    assert found is not None and found.card.id != "clip-grad"
    assert "zero_grad" in found.card.forms.en[0] or any(
        "zero_grad" in form for form in found.card.forms.en)


@pytest.mark.parametrize("question", [
    "should I call scheduler.step() every batch or every epoch?",
    "Adam weight_decay vs AdamW",
    "可以在训练循环里直接修改 model.weight.data 吗？",
])
def test_a_question_naming_only_training_code_reaches_a_card(question: str) -> None:
    # no anchor word of autograd itself: the names of PyTorch's training code place it
    assert bundled_book().match(question) is not None
