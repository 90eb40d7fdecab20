"""The guardrails catch a step's solution and expected numbers in any text."""

from __future__ import annotations

from tutor.chat.guardrails import find_leaks, flatten_numbers, redact, step_secrets
from tutor.course.models import Course


def _secrets(course: Course, **kwargs):  # type: ignore[no-untyped-def]
    return step_secrets(course.find("backward/cube")[1], **kwargs)


def test_a_pasted_solution_line_is_caught_even_reformatted(course: Course) -> None:
    secrets = _secrets(course)
    text = "Try this:\n```python\ncube  =  (w**3).sum()   # the sum\n```"
    report = find_leaks(text, secrets)
    assert report.leaked and report.code_lines == ["cube=(w**3).sum()"]
    assert "(w**3)" not in redact(text, secrets, report).replace(" ", "")


def test_the_whole_solution_is_caught(course: Course) -> None:
    solution = course.find("backward/cube")[1].solution  # type: ignore[union-attr]
    assert find_leaks(solution, _secrets(course)).leaked


def test_lines_the_learner_already_sees_are_not_secrets(course: Course) -> None:
    # the starter line and a bare backward() call teach nothing the step hides
    text = "Start from `w = torch.tensor([2., 5.])` and remember `cube.backward()`."
    assert not find_leaks(text, _secrets(course)).leaked


def test_expected_values_in_order_are_a_leak(course: Course) -> None:
    secrets = _secrets(course)
    assert find_leaks("You should get tensor([12., 75.])", secrets).leaked
    assert find_leaks("the gradient sums to 87", secrets).leaked
    assert not find_leaks("the gradient of a cube is 3 * w ** 2", secrets).leaked
    report = find_leaks("you get [12.0000, 75.0000]", secrets)
    assert "12" not in redact("you get [12.0000, 75.0000]", secrets, report)


def test_numbers_the_learner_typed_or_was_shown_are_not_leaks(course: Course) -> None:
    secrets = _secrets(course, expected_values=[5.0, 42.5])
    assert not find_leaks("w starts as [2., 5.]", secrets).leaked  # 5 is in the prompt
    assert find_leaks("the answer is 42.5", secrets).leaked
    assert not find_leaks("is it 42.5?", secrets, question="I got 42.5, is it right?").leaked


def test_snapshots_and_nested_lists_flatten_to_numbers() -> None:
    assert flatten_numbers([[1, 2], [3.5, True]]) == [1.0, 2.0, 3.5]
    assert flatten_numbers({"values": [1, 2]}) == [1.0, 2.0]
    assert flatten_numbers("tensor([1., 3.])") == [1.0, 3.0]


def test_a_step_without_solution_has_no_secrets(course: Course) -> None:
    secrets = step_secrets(course.find("backward/intro")[1])
    assert secrets.empty and not find_leaks("anything 12 75", secrets).leaked


def test_a_single_value_stated_as_its_expressions_value_is_caught(course: Course) -> None:
    # the step's x.grad is a scalar 4.0: trivial-looking numbers are answers when bound to it
    secrets = _secrets(
        course, expected_by_expr={"x.grad": 4.0, "len(params)": 10, "b.is_leaf": False}
    )
    for text in [
        "After backward, `x.grad` is 4.",
        "print(x.grad)  # tensor(4.)",
        "so x.grad == 4.0 here",
        "x.grad 是 4.0",
        "len(params) should be 10",
        "`b.is_leaf` is False",
    ]:
        report = find_leaks(text, secrets)
        assert report.bound, text
        assert "…" in redact(text, secrets, report), text


def test_the_same_numbers_elsewhere_in_prose_are_not_flagged(course: Course) -> None:
    secrets = _secrets(course, expected_by_expr={"x.grad": 4.0, "w": 1.0, "len(params)": 10})
    for text in [
        "Multiply by 4 and look at x.grad again.",  # 4 not stated as x.grad's value
        "x.grad is a tensor with 1 element",  # the value of x.grad is not 1
        "x.grad_fn is 4 levels deep",  # another expression
        "a w is 1 of the weights",  # 'is' does not bind a one-letter name
        "Count 10 layers, then call len(params).",
        "y.grad is 4.",  # another tensor
    ]:
        assert not find_leaks(text, secrets).bound, text
    assert find_leaks("w = 1.", secrets).bound  # a sign does bind it


def test_answer_steps_guard_their_own_expression(course: Course) -> None:
    from tutor.course.models import AnswerStep

    step = AnswerStep.model_validate(
        {
            "id": "count",
            "kind": "answer",
            "title": {"en": "Count", "zh": "数一数"},
            "prompt": {"en": "How many?", "zh": "几个？"},
            "code": "params = list(net.parameters())",
            "expr": "len(params)",
            "cross_check": 10,
        }
    )
    secrets = step_secrets(step)
    assert find_leaks("Here len(params) → 10", secrets).leaked
    assert not find_leaks("Lesson 10 explains parameters.", secrets).leaked


def test_lines_of_the_chinese_starter_are_seen_not_secrets() -> None:
    from tutor.course.models import CodeStep

    step = CodeStep.model_validate({
        "id": "s", "kind": "code", "title": {"en": "t", "zh": "t"},
        "prompt": {"en": "Fill in y.", "zh": "填写 y。"},
        "starter": {"en": 'import torch\nx = torch.ones(2)\nprint("the gradient of y:", x.grad)\n',
                    "zh": 'import torch\nx = torch.ones(2)\nprint("y 的梯度：", x.grad)\n'},
        "solution": 'import torch\nx = torch.ones(2, requires_grad=True)\n'
                    '(x * 3).pow(2).sum().backward()\nprint("y 的梯度：", x.grad)\n',
        "checks": [{"kind": "no_error"}],
    })
    secrets = step_secrets(step)
    # the zh starter's lines (strings translated) are what a zh learner was given
    assert not find_leaks('最后一行 `print("y 的梯度：", x.grad)` 不用改', secrets).leaked
    assert find_leaks("```python\n(x * 3).pow(2).sum().backward()\n```", secrets).leaked
