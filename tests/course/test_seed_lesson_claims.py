"""Claims the lesson text makes about torch, checked against torch (QA2 #29, issue 21 §1).

The seed-coverage test runs the code; these check sentences: the line a fix step says its
starter stops on, the matrix-form formulas lesson 6 gives for the gradients (each one
evaluated, in both languages, against what backward() really computes), and each correction
of issue 21 §1: the sentence is in the lesson (both languages) and torch agrees with it.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest
import torch

from tutor.course import load_course
from tutor.course.models import CodeStep, Course, FixStep
from tutor.grading.verdicts import grade_step
from tutor.sandbox import Sandbox

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(LESSONS_DIR)


def failing_line(code: str) -> str:
    """The source line at which ``code`` raises."""
    try:
        exec(compile(code, "<starter>", "exec"), {})
    except Exception:
        tb = sys.exc_info()[2]
        lineno = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<starter>":
                lineno = tb.tb_lineno
            tb = tb.tb_next
        assert lineno is not None
        return code.splitlines()[lineno - 1]
    raise AssertionError("the starter was expected to fail")


def test_integer_tensor_prompt_names_the_line_that_fails(course: Course) -> None:
    # the prompt said "stops at the first line", but the import runs; the tensor line fails
    _, step = course.find("requires-grad/integer-tensor")
    assert isinstance(step, FixStep)
    line = failing_line(step.starter_for("en"))
    target = line.split("=")[0].strip()
    assert target == "x"
    assert f"creates `{target}`" in step.prompt.en and "first line" not in step.prompt.en
    assert f"创建 `{target}`" in step.prompt.zh and "第一行" not in step.prompt.zh


@pytest.mark.parametrize(("lang", "start"), [("en", "In matrix form"), ("zh", "写成矩阵形式")])
def test_matrix_form_formulas_give_torchs_gradients(course: Course, lang: str, start: str) -> None:
    # `x.grad = v @ yᵀ` has shape (1, 2), the very shape the lesson says x.grad does not have
    lesson = course.lesson("matrix-mm")
    body = lesson.steps[0].body.get(lang)  # type: ignore[union-attr]
    paragraph = body[body.index(start):].split("\n\n")[0]
    x = torch.tensor([2., 1.], requires_grad=True)
    y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    v = torch.tensor([[1., 0.]])
    torch.mm(x.view(1, 2), y).backward(v)
    names: dict[str, object] = {"x": x.detach(), "y": y.detach(), "v": v, "torch": torch}
    checked = []
    for span in re.findall(r"`([^`]+)`", paragraph):
        if " = " not in span:
            continue
        lhs, rhs = (part.strip() for part in span.split(" = ", 1))
        value = eval(rhs.replace("ᵀ", ".T"), names)
        if lhs.endswith(".grad"):
            actual = {"x.grad": x.grad, "y.grad": y.grad}[lhs]
            assert value.shape == actual.shape and torch.equal(value, actual), (lang, span)
            checked.append(lhs)
        else:
            names[lhs] = value
    assert sorted(checked) == ["x.grad", "y.grad"]


# ------------------------------------------------------------------ issue 21, section 1


def _reading(course: Course, lesson_id: str) -> tuple[str, str]:
    body = course.lesson(lesson_id).steps[0].body  # type: ignore[union-attr]
    return " ".join(body.en.split()), " ".join(body.zh.split())


def test_paths_are_summed_by_the_engine_and_grad_adds_up_across_calls(course: Course) -> None:
    en, zh = _reading(course, "accumulation")
    assert "fires once, already holding `2x + 1`" in en
    assert "只触发一次，拿到的已经是 `2x + 1`" in zh
    x = torch.tensor([1., 2.], requires_grad=True)
    seen: list[torch.Tensor] = []
    x.register_hook(lambda g: seen.append(g.clone()))
    (x * x + x).sum().backward()
    assert len(seen) == 1 and torch.equal(seen[0], 2 * x.detach() + 1)
    assert torch.equal(x.grad, seen[0])  # .grad received the total once
    (x * x + x).sum().backward()
    assert len(seen) == 2 and torch.equal(x.grad, 2 * seen[0])  # a second call adds
    quiz = course.find("accumulation/why-accumulate")[1]
    assert [c.text.en for c in quiz.choices if c.correct and "path" in c.text.en] == []  # type: ignore[union-attr]


def test_the_legacy_constructor_takes_the_default_dtype_and_always_the_cpu(
    course: Course,
) -> None:
    en, zh = _reading(course, "matrix-mm")
    assert "the default dtype (float32, or float64 after `torch.set_default_dtype" in en
    assert "and always the CPU" in en and "follows the default device" in en
    assert "float64" in zh and "总在 CPU 上" in zh and "跟随默认设备" in zh
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.Tensor([[1., 0]]).dtype == torch.float64
    finally:
        torch.set_default_dtype(dtype)
    torch.set_default_device("meta")  # a second device every build has
    try:
        assert torch.Tensor([[1., 0]]).device.type == "cpu"
        assert torch.tensor([[1., 0.]]).device.type == "meta"
    finally:
        torch.set_default_device(None)


def test_mm_saved_y_and_the_view_not_x(course: Course) -> None:
    en, zh = _reading(course, "matrix-mm")
    assert "`mm` saved `y` and the view `x.view(1, 2)`" in en
    assert "`mm` 保存了 `y` 和视图 `x.view(1, 2)`" in zh
    x = torch.tensor([2., 1.], requires_grad=True)
    y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    row = x.view(1, 2)
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        torch.mm(row, y)
    by_shape = {tuple(t.shape): t for t in saved}
    assert len(saved) == 2 and set(by_shape) == {(1, 2), (2, 2)}  # nothing of x's shape (2,)
    assert by_shape[(1, 2)]._base is x and torch.equal(by_shape[(1, 2)], row)
    assert by_shape[(2, 2)] is y


def test_a_grad_fn_is_a_node_and_an_in_place_op_makes_no_new_tensor(course: Course) -> None:
    en, zh = _reading(course, "graph")
    assert "Every such node is a `torch.autograd.graph.Node`" in en
    assert "`torch.autograd.Function` is the base class you subclass" in en
    assert "makes no new tensor" in en and "不会生成新张量" in zh
    a = torch.tensor([1., 2.], requires_grad=True)
    b = a * 3
    made_b = b.grad_fn
    assert isinstance(made_b, torch.autograd.graph.Node)
    assert not isinstance(made_b, torch.autograd.Function)
    assert b.mul_(2) is b  # the same tensor object
    assert b.grad_fn is not made_b and b.grad_fn.name() == "MulBackward0"
    assert b.grad_fn.next_functions[0][0] is made_b  # its input: the node that made b


def test_the_gradient_lands_in_grad_of_a_tracked_leaf_only(course: Course) -> None:
    en, zh = _reading(course, "requires-grad")
    assert "the gradient of a tracked *leaf* tensor lands in its `.grad`" in en
    assert "被追踪的*叶子张量*的梯度会存进它的 `.grad`" in zh
    x = torch.ones(2, requires_grad=True)
    h = x * 2
    (h * h).sum().backward()
    assert x.grad is not None
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):  # lesson 12's "silent" one
        assert h.grad is None


def test_torch_norm_is_deprecated_in_favour_of_vector_norm(course: Course) -> None:
    en, zh = _reading(course, "data-norm")
    assert "**`torch.norm` is deprecated.**" in en and "`torch.linalg.vector_norm(y)`" in en
    assert "**`torch.norm` 已被弃用。**" in zh
    assert "deprecated" in (torch.norm.__doc__ or "")
    y = torch.tensor([3., 4., 12.])
    assert torch.linalg.vector_norm(y) == y.norm() == 13


def test_fit_line_accepts_gradients_cleared_at_the_start_or_at_the_end(
    course: Course, sandbox: Sandbox
) -> None:
    lesson, step = course.find("review/fit-line")
    assert isinstance(step, CodeStep)
    at_start = ("        if w.grad is not None:\n"
                "            w.grad.zero_()\n            b.grad.zero_()\n")
    assert at_start in step.solution
    as_none = step.solution.replace(at_start, "        w.grad = None\n        b.grad = None\n")
    at_end = step.solution.replace(at_start, "").replace(
        "            b -= 0.05 * b.grad\n",
        "            b -= 0.05 * b.grad\n        w.grad.zero_()\n        b.grad.zero_()\n")
    for code in (step.solution, as_none, at_end):
        assert grade_step(lesson, step, code, runner=sandbox).passed, code
    never = step.solution.replace(at_start, "")  # gradients that pile up give other values
    assert not grade_step(lesson, step, never, runner=sandbox).passed


_FIGURE = re.compile(r"\b(picture|diagram|figure|illustration)s?\b|下图|如图|图示|示意图", re.I)


def test_no_lesson_promises_a_picture(course: Course) -> None:
    """The tutor shows text: a reading that points at a figure points at nothing."""
    for lesson in course.lessons:
        for step in lesson.steps:
            for name in ("title", "body", "prompt"):
                text = getattr(step, name, None)
                if text is not None:
                    for lang in ("en", "zh"):
                        assert not _FIGURE.search(text.get(lang)), (lesson.id, step.id, lang)


def test_markdown_keeps_the_stars_of_the_non_scalar_formulas(course: Course) -> None:
    from tutor.course.lint import eaten_by_markdown

    quiz = course.find("non-scalar/ones-equals-sum")[1]
    explanation = quiz.choices[0].explanation  # type: ignore[union-attr]
    assert "`1*z[0] + 1*z[1] + 1*z[2]`" in explanation.en
    for lesson in course.lessons:
        for step in lesson.steps:
            for choice in getattr(step, "choices", None) or []:
                for lang in ("en", "zh"):
                    assert eaten_by_markdown(choice.explanation.get(lang)) == []


def _explanation(course: Course, ref: str, starts: str) -> str:
    step = course.find(ref)[1]
    [choice] = [c for c in step.choices if c.text.en.startswith(starts)]  # type: ignore[union-attr]
    assert not choice.correct
    return choice.explanation.en


def test_what_the_quizzes_say_against_their_wrong_choices_holds(course: Course) -> None:
    """Section 3's distractors are answered with facts about torch: each one checked here."""
    import inspect

    said = _explanation(course, "graph/accumulate-node", "The weight tensor")
    assert "whose `.variable` is `w`" in said
    w = torch.randn(3, requires_grad=True)
    mul = (w * 2).sum().grad_fn.next_functions[0][0]
    assert all(not isinstance(n, torch.Tensor) for n, _ in mul.next_functions)
    assert mul.next_functions[0][0].variable is w

    said = _explanation(course, "accumulation/why-accumulate", "Because optimizers")
    assert "`optimizer.state[p]['momentum_buffer']`" in said
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    opt.step()
    assert "momentum_buffer" in opt.state[w]

    said = _explanation(course, "matrix-mm/why-shape", "`backward` sums")
    assert "a leaf created with shape (1, 2) gets a (1, 2) gradient" in said
    row = torch.tensor([[2., 1.]], requires_grad=True)
    torch.mm(row, torch.tensor([[1., 2.], [3., 4.]])).backward(torch.tensor([[1., 0.]]))
    assert row.grad is not None and row.grad.shape == (1, 2)

    said = _explanation(course, "data-norm/data-vs-detach", "`.data` is deprecated")
    assert "without any warning" in said
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert w.data is not None

    said = _explanation(course, "custom-function/why-float64", "In float64")
    assert "`atol=1e-05` and `rtol=0.001` by default" in said
    defaults = inspect.signature(torch.autograd.gradcheck).parameters
    assert (defaults["atol"].default, defaults["rtol"].default) == (1e-05, 0.001)

    said = _explanation(course, "dynamic-graph/when-built", "It also differentiates")
    assert "a boolean tensor with no `grad_fn`" in said
    b = torch.tensor(3., requires_grad=True) * 2
    flag = b.norm() < 1000
    assert flag.dtype == torch.bool and flag.grad_fn is None and not flag.requires_grad


def test_the_source_texts_grad_tensors_is_backwards_gradient(course: Course) -> None:
    """The seed says `grad_tensors`; lesson 6 names it and says the two forms agree."""
    import inspect

    en, zh = _reading(course, "matrix-mm")
    assert "`torch.autograd.backward(z, grad_tensors=v)`, which does the same as " \
           "`z.backward(gradient=v)`" in en
    assert "`torch.autograd.backward(z, grad_tensors=v)`" in zh
    assert "grad_tensors" in inspect.signature(torch.autograd.backward).parameters
    assert "gradient" in inspect.signature(torch.Tensor.backward).parameters
    grads = []
    for backward in (lambda z, v: torch.autograd.backward(z, grad_tensors=v),
                     lambda z, v: z.backward(gradient=v)):
        x = torch.tensor([2., 1.], requires_grad=True)
        y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        backward(torch.mm(x.view(1, 2), y), torch.tensor([[1., 0.]]))
        grads.append((x.grad, y.grad))
    assert all(torch.equal(a, b) for a, b in zip(*grads, strict=True))


def test_setting_requires_grad_on_a_module_freezes_nothing(course: Course) -> None:
    en, zh = _reading(course, "training-traps")
    assert "`layer.requires_grad = False` sets a plain Python attribute on the module and " \
           "freezes nothing" in en
    assert "`layer.requires_grad = False` 只是给模块设了一个普通的 Python 属性，什么也没冻结" in zh
    layer = torch.nn.Linear(2, 1)
    layer.requires_grad = False  # type: ignore[assignment]
    assert all(p.requires_grad for p in layer.parameters())
    layer.requires_grad_(False)
    assert not any(p.requires_grad for p in layer.parameters())
    # zero_grad between backward and step: the step finds no gradient and moves nothing
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    layer.requires_grad_(True)
    before = layer.weight.detach().clone()
    layer(torch.ones(1, 2)).sum().backward()
    opt.zero_grad()
    opt.step()
    assert torch.equal(before, layer.weight)
