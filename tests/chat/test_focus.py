"""The answer is about what the question asks, not about what its pasted code happens to use:
an API found only inside the pasted statements says what the code uses; when the learner's
own words name something else ("w.grad is None"), those words decide."""

from __future__ import annotations

import pytest

from tutor.chat import Tutor
from tutor.chat.cards import CardBook
from tutor.course import load_course

CODE = "v = Variable(torch.ones(2), requires_grad=True); w = v * 3; w.sum().backward()"


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    return Tutor(load_course())


@pytest.mark.parametrize(
    "question",
    [
        f"{CODE}. v.grad is fine but w.grad is None - how do I read w.grad?",
        f"{CODE}。v.grad 正常，但 w.grad 是 None，怎样才能拿到 w.grad？",
    ],
)
def test_an_api_only_in_the_pasted_code_does_not_decide_the_answer(
    tutor: Tutor, question: str
) -> None:
    found = CardBook().match(question)
    assert found is None or found.card.id != "variable-deprecated"
    answer = tutor.ask(question)
    assert "retain_grad" in answer.text and "Variable" not in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "v = Variable(torch.ones(2), requires_grad=True); print(type(v)). Why?",
        "Do I still need Variable(x, requires_grad=True)?",
        "还需要写 Variable(x, requires_grad=True) 吗？",
    ],
)
def test_the_pasted_code_decides_when_the_words_name_nothing_else(question: str) -> None:
    found = CardBook().match(question)
    assert found is not None and found.card.id == "variable-deprecated"
