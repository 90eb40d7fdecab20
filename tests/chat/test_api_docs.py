"""What torch's documentation says of the API a question names: read once from the installed
torch into api_docs.json, found by the receiver a learner writes (``optimizerD.zero_grad``
is an optimizer's, ``ctx.save_for_backward`` a Function context's), and given after an
English answer; Chinese answers stay Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutor.chat import api_docs
from tutor.chat.api_docs import documented, with_documentation


def test_the_bundled_file_is_what_the_installed_torch_writes(tmp_path: Path) -> None:
    written = tmp_path / "api_docs.json"
    api_docs.write_api_docs(written)
    assert json.loads(written.read_text()) == json.loads(api_docs.DATA.read_text())


@pytest.mark.parametrize(("question", "names"), [
    ("does model.zero_grad() == optimizer.zero_grad() ?",
     ["Module.zero_grad", "Optimizer.zero_grad"]),
    ("optimizerD.zero_grad() instead of netD.zero_grad()?",
     ["Optimizer.zero_grad", "Module.zero_grad"]),
    ("How to save int value in ctx.save_for_backward?", ["FunctionCtx.save_for_backward"]),
    ("what does x.retain_grad() do under torch.no_grad?", ["Tensor.retain_grad", "torch.no_grad"]),
    ("is `register_full_backward_hook` called before the step?",
     ["Module.register_full_backward_hook"]),
    ("see train.py and utils.py: loss is nan", []),
    ("my `loss` is nan", []),
])
def test_the_names_a_question_asks_about(question: str, names: list[str]) -> None:
    assert [name for name, _ in documented(question)] == names


def test_the_documentation_is_prose_without_markup() -> None:
    found = dict(documented("what does ctx.save_for_backward keep?"))
    said = found["FunctionCtx.save_for_backward"]
    assert said.startswith("Save given tensors for a future call to Function.backward.")
    assert "only with tensors" in said
    # plain prose: no roles, no code spans (a parameter's name is nobody's name here)
    assert ":func:" not in said and "`" not in said and ">>>" not in said
    mean = dict(documented("what does x.mean() give?"))["Tensor.mean"]
    assert mean.startswith("Returns the mean value")  # its "See torch.mean" followed
    retain = dict(documented("why call x.retain_grad() here?"))["Tensor.retain_grad"]
    assert not retain.startswith("retain_grad()")  # a builtin's signature line is dropped


def test_an_english_answer_gets_it_before_its_reading_line() -> None:
    text = "Gradients add up.\n\nRead: lesson “Gradients accumulate”."
    shown = with_documentation(text, "model.zero_grad() or optimizer.zero_grad()?", "en")
    body, _, read = shown.partition("\n\nRead: ")
    assert body.startswith("Gradients add up.\n\nWhat torch's documentation says:\n- `")
    assert "`Optimizer.zero_grad`: Reset the gradients of all optimized" in body
    assert read == "lesson “Gradients accumulate”."


def test_a_chinese_answer_and_a_question_naming_no_api_stay_as_they_are() -> None:
    assert with_documentation("梯度会累加。", "model.zero_grad() 和 optimizer.zero_grad() 一样吗？",
                              "zh") == "梯度会累加。"
    assert with_documentation("Gradients add up.", "why do my gradients grow?", "en") == \
        "Gradients add up."


def test_a_name_the_answer_already_explains_is_left_to_it() -> None:
    text = "`retain_grad()` keeps the gradient of a non-leaf."
    assert with_documentation(text, "what does x.retain_grad() do?", "en") == text


def test_the_code_a_question_pastes_is_not_what_it_asks_about() -> None:
    question = """Why is the grad None here?
```python
x = torch.randn(3, requires_grad=True)
y = x.detach()
```
"""
    assert documented(question) == []
    assert [n for n, _ in documented("why does x.detach() stop the gradient?")] == [
        "Tensor.detach"]


def test_only_what_the_question_asks_about_is_quoted() -> None:
    """The names of its story (what the code around it calls) are not what it asks."""
    question = ("Why detach here?\n\nWe build the values with torch.cat(outs), and then "
                "old_log_probs.detach() is used in the loss.")
    assert documented(question) == []
    assert [n for n, _ in documented("Why is x.detach() needed here?")] == ["Tensor.detach"]
