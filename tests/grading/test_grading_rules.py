"""Comparison on plain data and AST rules: fast, no processes."""

from __future__ import annotations

import ast
import re

import pytest

from tutor.grading.ast_rules import check_rule, grad_assignments
from tutor.grading.compare import compare
from tutor.grading.feedback import catalog
from tutor.i18n import T
from tutor.sandbox.models import RunResult, TensorSnapshot, ValueSnapshot


def tensor(values: object, shape: list[int], dtype: str = "torch.float32") -> TensorSnapshot:
    numel = 1
    for dim in shape:
        numel *= dim
    return TensorSnapshot(shape=shape, dtype=dtype, device="cpu", requires_grad=False,
                          is_leaf=True, numel=numel, values=values)


NONE = ValueSnapshot(type="NoneType", repr="None", value=None)


def test_equal_tensors_within_tolerance() -> None:
    assert compare("x.grad", tensor([1.0, 3.0000001], [2]), tensor([1.0, 3.0], [2])).ok


def test_shape_mismatch_message() -> None:
    result = compare("x.grad", tensor([[1.0, 3.0]], [1, 2]), tensor([1.0, 3.0], [2]))
    assert not result.ok
    assert result.message.en == "`x.grad` has shape (1, 2); expected (2,)."
    assert "(1, 2)" in result.message.zh and result.output is not None
    assert result.output.en.splitlines()[1].startswith("expected: tensor [1.0, 3.0] (shape (2,)")
    assert result.output.zh.splitlines() == [
        "得到：tensor [[1.0, 3.0]]（形状 (1, 2)，torch.float32）",
        "应为：tensor [1.0, 3.0]（形状 (2,)，torch.float32）",
    ]


def test_first_differing_element_with_index() -> None:
    got = tensor([[2.0, 0.0], [1.0, 5.0]], [2, 2])
    want = tensor([[2.0, 0.0], [1.0, 0.0]], [2, 2])
    result = compare("y.grad", got, want)
    assert result.message.en == "`y.grad` differs at [1, 1]: got 5.0, expected 0.0."


def test_nan_never_equals() -> None:
    result = compare("w", tensor(["nan", 1.0], [2]), tensor(["nan", 1.0], [2]))
    assert not result.ok and "NaN" in result.message.en
    assert compare("w", tensor(["inf"], [1]), tensor(["inf"], [1])).ok
    assert not compare("w", tensor(["-inf"], [1]), tensor(["inf"], [1])).ok


def test_grad_none_gives_the_two_likely_causes() -> None:
    result = compare("x.grad", NONE, tensor([1.0, 1.0], [2]))
    assert result.message.en == (
        "`x.grad` is None: did `backward()` reach `x`? Was `x` created with "
        "`requires_grad=True`?"
    )


def test_dtype_checked_only_when_asked() -> None:
    got = tensor([1.0, 2.0], [2], "torch.float64")
    want = tensor([1.0, 2.0], [2])
    assert compare("a", got, want).ok
    result = compare("a", got, want, check_dtype=True)
    assert not result.ok and "dtype torch.float64; expected torch.float32" in result.message.en


def test_literal_and_solution_truths() -> None:
    assert compare("x.grad", tensor([1.0, 1.0], [2]), [1.0, 1.0], literal=True).ok
    assert compare("z.item()", ValueSnapshot(type="float", repr="27.0", value=27.0), 27).ok
    # from the solution, a tensor where a number is expected is pointed out
    number = ValueSnapshot(type="float", repr="27.0", value=27.0)
    result = compare("loss", tensor(27.0, []), number)
    assert not result.ok and ".item()" in result.message.en
    flag = ValueSnapshot(type="bool", repr="True", value=True)
    assert not compare("f", ValueSnapshot(type="int", repr="1", value=1), flag).ok
    node = ValueSnapshot(type="MmBackward0", repr="<MmBackward0 object at 0x1>", value=None)
    same = ValueSnapshot(type="MmBackward0", repr="<MmBackward0 object at 0x2>", value=None)
    assert compare("z.grad_fn", same, node).ok


def _rule(code: str, rule: str, name: str | None = None) -> bool:
    return check_rule(ast.parse(code), rule, name).holds  # type: ignore[arg-type]


def test_ast_rules() -> None:
    backward = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
    assert _rule(backward, "calls_backward")
    assert _rule("import torch\ng = torch.autograd.grad(y, x)\n", "grad_from_backward")
    assert not _rule("x = 1\n", "calls_backward")
    assert _rule("import torch\nwith torch.no_grad():\n    y = x * 2\n", "uses_no_grad")
    assert _rule("import torch\n@torch.no_grad()\ndef f(x):\n    return x\n", "uses_no_grad")
    assert not _rule("y = x * 2\n", "uses_no_grad")
    assert not _rule("n = y.data.norm()\n", "no_data_attribute")
    assert _rule("import torch as t\nz = t.mm(a, b)\n", "calls", "torch.mm")
    assert _rule("z = a.mm(b)\n", "calls", "torch.mm")
    assert _rule("from torch import mm\nz = mm(a, b)\n", "calls", "torch.mm")
    assert not _rule("z = a @ b\n", "calls", "torch.mm")
    assert _rule("d = x.detach()\n", "calls", "detach")
    assert not _rule("d = x.detach()\n", "does_not_call", "detach")
    assert _rule(backward + "x.grad.zero_()\nx.grad = None\n", "grad_from_backward")
    with pytest.raises(ValueError):
        _rule("x = 1\n", "calls")


@pytest.mark.parametrize(
    "line",
    ["x.grad = g", "x.grad += 1", "x.grad[0] = 1.", "x.grad.data = g", "x.grad.copy_(g)",
     "x.grad.data.fill_(1.)", "setattr(x, 'grad', g)", "setattr(x, name, g)",
     "torch.nn.init.ones_(x.grad)", "x.grad, y = g, 1", "x.grad: object = g"],
)
def test_every_way_of_writing_grad_is_found(line: str) -> None:
    writes = grad_assignments(ast.parse(line + "\n"))
    assert writes and writes[0][0] == 1, line


def test_catalog_is_bilingual_and_complete() -> None:
    messages = catalog()
    for key, text in messages.items():
        assert text.en.strip() and text.zh.strip(), key
        names = re.compile(r"\{(\w+)")
        assert set(names.findall(text.en)) == set(names.findall(text.zh)), key
    rules = ["calls_backward", "uses_no_grad", "no_grad_assignment", "no_data_attribute",
             "grad_from_backward", "calls", "does_not_call"]
    for rule in rules:
        for prefix in ("label_ast_", "ast_ok_", "ast_fail_"):
            assert prefix + rule in messages


def test_attribute_and_stdout_details_are_bilingual() -> None:
    from tutor.course.models import AttributeCheck, StdoutCheck
    from tutor.grading.checks import evaluate
    from tutor.sandbox.models import ProbeResult, TensorSnapshot

    def tensor(shape: list[int]) -> TensorSnapshot:
        return TensorSnapshot(shape=shape, dtype="torch.float32", device="cpu",
                              requires_grad=False, is_leaf=True, values=None,
                              numel=2)

    run = RunResult(outcome="ok", device="cpu", stdout="",
                    probes=[ProbeResult(expr="x", value=tensor([1, 2]))])
    expected = RunResult(outcome="ok", device="cpu", stdout="done\n",
                         probes=[ProbeResult(expr="x", value=tensor([2]))])
    checks = [AttributeCheck(kind="attribute", expr="x", attribute="shape"),
              StdoutCheck(kind="stdout", same_as_solution=True),
              StdoutCheck(kind="stdout", contains="done")]
    shape, same, contains = evaluate(checks, "x = 1", ast.parse("x = 1"), run, expected)
    assert shape.output == "got: (1, 2)\nexpected: (2,)"
    assert shape.output_for("en") == shape.output
    assert shape.output_for("zh") == "得到：(1, 2)\n应为：(2,)"
    assert same.output_for("en") == "got:\n\nexpected:\ndone\n"
    assert same.output_for("zh") == "得到：\n\n应为：\ndone\n"
    assert (contains.output_for("en"), contains.output_for("zh")) == ("(no output)", "（没有输出）")


def test_a_check_result_from_before_output_text_still_reads() -> None:
    from tutor.grading.models import CheckResult

    old = CheckResult(name="n", label=T("l", "l"), status="fail", points=0, max_points=1,
                      message=T("m", "m"), output="got: 1")
    assert old.output_for("zh") == "got: 1" and old.output_text is None


def test_hand_written_grads_name_whose_gradient_was_written() -> None:
    import ast

    from tutor.grading.ast_rules import hand_written_grads

    def owners(code: str) -> set[str] | None:
        return hand_written_grads(ast.parse(code))

    assert owners("x.grad = t\nw.grad[0] = 1\nb.grad.fill_(1.)\n") == {"x", "w", "b"}
    assert owners("torch.nn.init.ones_(net.fc.grad)\nsetattr(y, 'grad', t)\n") == {"net.fc", "y"}
    assert owners("x.grad = None\nx.grad.zero_()\n") == set()
    assert owners("setattr(x, name, t)\n") is None  # could be any tensor's gradient


def test_a_trees_nodes_are_listed_once_and_stay_in_walk_order() -> None:
    import ast

    from tutor.python_names import nodes

    tree = ast.parse("import torch\nx = torch.ones(2)\nx.grad = None\n")
    assert nodes(tree) is nodes(tree)  # the rules of one submission share one listing
    assert list(nodes(tree)) == list(ast.walk(tree))
    other = ast.parse("y = 1\n")
    assert list(nodes(other)) == list(ast.walk(other))
