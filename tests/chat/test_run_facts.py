"""Why pasted code prints what it prints: the facts of its own run (tutor/chat/run_facts.py),
on the source and records alone, then through a real sandbox and the Tutor."""

from __future__ import annotations

import ast

import pytest

from tutor.chat import Tutor
from tutor.chat.run_facts import Pass, Seen, facts, text_for, watch
from tutor.course import load_course
from tutor.sandbox import Sandbox

VIEW = """import torch
x1 = torch.rand(5).requires_grad_()
x1 = x1.view((-1, 1))
x1.sum().backward()
print(x1.grad)
x1 = torch.rand(5).requires_grad_()
x1.sum().backward()
print(x1.grad)"""

TWICE = """import torch
x = torch.ones(2, 2, requires_grad=True)
out = (3 * (x + 2) ** 2).mean()
out.backward(retain_graph=True)
print(x.grad)
out.backward(retain_graph=True)
print(x.grad)"""

HIDDEN = """import torch
a = torch.tensor(5.0, requires_grad=True) * 0.1
b = torch.tensor(2.0, requires_grad=True)
c = a + b
c.backward()
print(a.grad, b.grad)"""


def test_the_records_keep_every_line_where_it_was() -> None:
    code = "import torch\nif True: x = torch.ones(2, requires_grad=True); print('梯度', x.grad)\n"
    watched = watch(code + "x.sum().backward()\nprint(x.grad)")
    assert watched is not None
    assert watched.names == ("x",)
    lines = watched.code.splitlines()
    assert len(lines) == 4 and lines[0] == "import torch"
    ast.parse(watched.code)  # after a block's ":" and a ";" on one line, it still parses
    assert lines[2].endswith("x.sum().backward()") and "__tutor_backwards" in lines[2]
    assert watch("import torch\nprint(torch.ones(2))") is None  # it reads no .grad
    assert watch("print(x.grad") is None  # does not parse


def test_the_source_says_which_line_rebound_a_name_or_hid_a_leaf() -> None:
    watched = watch(VIEW)
    assert watched is not None
    first = watched.bindings["x1"][1]
    assert (first.line, first.rebinds, first.hides_leaf) == (3, True, False)
    hidden = watch(HIDDEN)
    assert hidden is not None
    assert hidden.bindings["a"][0].hides_leaf and not hidden.bindings["b"][0].hides_leaf
    moved = watch("x = torch.ones(3, requires_grad=True).cuda()\nprint(x.grad)")
    assert moved is not None and moved.bindings["x"][0].hides_leaf
    vjp = watch("y = x * 2\ny.backward(torch.ones(2))\nprint(x.grad)")
    assert vjp is not None and vjp.backwards[0].with_gradient


def _seen(line: int, name: str, *, leaf: bool = True, grad_none: bool = False,
          backwards: int = 1, grad_fn: str | None = None, rg: bool = True) -> Seen:
    return Seen(line, name, leaf, rg, grad_fn, grad_none, backwards)


def test_a_non_leaf_is_explained_with_the_line_that_made_it() -> None:
    watched = watch(VIEW)
    assert watched is not None
    found = facts(watched, [
        _seen(5, "x1", leaf=False, grad_none=True, grad_fn="ViewBackward0"),
        _seen(8, "x1", backwards=2),
    ], [Pass(("?",), 0), Pass(("x1",), 0)])  # the first reached a leaf with no name left
    assert [f.key for f in found] == ["non_leaf", "rebound", "filled"]
    assert found[0].values["grad_fn"] == "ViewBackward0"
    assert found[1].values["line"] == "3"


def test_a_non_leaf_whose_gradient_was_kept_is_not_said_to_have_none() -> None:
    """``z.retain_grad()`` before backward(): the run read a gradient in ``z.grad``, so "stays
    None" would contradict what the learner printed (learner12 zh-8c5942fd, judged wrong)."""
    watched = watch("import torch\nx = torch.randn(4, requires_grad=True).cuda()\n"
                    "z = torch.clone(x)\nz.retain_grad()\n(z * z).sum().backward()\n"
                    "print(x.grad)\nprint(z.grad)")
    assert watched is not None
    found = facts(watched, [
        _seen(6, "x", leaf=False, grad_none=True, grad_fn="ToCopyBackward0", backwards=1),
        _seen(7, "z", leaf=False, grad_none=False, grad_fn="CloneBackward0", backwards=1),
    ], [Pass(("?",), 0)])
    assert [(f.key, f.values["name"]) for f in found][:1] == [("non_leaf", "x")]
    # what z.grad holds is said: the derivative with respect to the intermediate itself
    assert [f.key for f in found if f.values["name"] == "z"] == ["retained"]
    assert "None" not in text_for([f for f in found if f.values["name"] == "z"], "en")


def test_a_kept_gradient_of_a_rebound_name_is_the_one_of_the_value_bound_there() -> None:
    """``x = x ** 2`` then ``x.retain_grad()``: ``x.grad`` is the derivative with respect to
    the square, not the leaf the name held before (learner19 en-daafc703, judged ok: the
    value right and no why)."""
    code = ("import torch\nx = torch.tensor(42., requires_grad=True)\nx = x ** 2\n"
            "x3 = x ** 3\nf = x + x3\nx.retain_grad()\nf.backward()\nprint(x.grad)")
    watched = watch(code)
    assert watched is not None
    found = facts(watched, [_seen(8, "x", leaf=False, grad_none=False,
                                  grad_fn="PowBackward0", backwards=1)], [Pass(("?",), 0)])
    assert [f.key for f in found] == ["retained", "rebound_retained"]
    assert found[0].values["output"] == "f" and found[1].values["line"] == "3"
    said = text_for(found, "zh")
    assert "`x = x ** 2`" in said and "中间结果" in said


def test_an_accumulation_is_said_only_when_a_backward_added_to_an_earlier_gradient() -> None:
    watched = watch(TWICE)
    assert watched is not None
    reads = [_seen(5, "x", backwards=1), _seen(7, "x", backwards=2)]
    added = facts(watched, reads, [Pass(("x",), 0), Pass(("x",), 1)])
    assert [f.key for f in added] == ["filled", "added"]
    assert added[1].values["count"] == "2"
    # two backward() calls, each on a fresh leaf: nothing was added up
    fresh = facts(watched, reads, [Pass(("x",), 0), Pass(("x",), 0)])
    assert [f.key for f in fresh] == ["filled", "filled_plain"]


def test_none_before_backward_unreached_and_untracked_tensors_have_their_own_facts() -> None:
    watched = watch("print(w.grad)\nloss.backward()\nprint(w.grad)\nprint(k.grad)")
    assert watched is not None
    found = facts(watched, [
        _seen(1, "w", grad_none=True, backwards=0),
        _seen(3, "w", grad_none=True, backwards=1),
        _seen(4, "k", rg=False, grad_none=True),
    ])
    assert [f.key for f in found] == ["no_backward_yet", "not_reached", "no_requires_grad"]
    # a record of something that is not a tensor (a module's .grad, an int) says nothing
    assert facts(watched, [Seen(1, "w", None, None, None, True, 0)]) == []


FLAGS = """import torch
x = torch.ones(3, requires_grad=True)
y = x * 2
with torch.no_grad():
    z = x * 2
w = y.detach()
v = torch.tensor([1.0, 2.0])
u = v * 3
c = torch.tensor(y.tolist())
print(x.requires_grad, y.requires_grad, z.requires_grad, w.requires_grad, u.requires_grad)
print(y.grad_fn, x.is_leaf, c.requires_grad)"""


def test_a_printed_requires_grad_is_explained_by_the_line_that_bound_the_name() -> None:
    watched = watch(FLAGS)
    assert watched is not None
    assert (10, "z") in watched.flags and not watched.grads
    found = facts(watched, [
        _seen(10, "x"), _seen(10, "y", leaf=False, grad_fn="MulBackward0"),
        _seen(10, "z", rg=False), _seen(10, "w", rg=False), _seen(10, "u", rg=False),
        _seen(11, "c", rg=False)])
    # u: nothing the source says establishes why (recording may be off globally): no claim
    assert [(f.key, f.values["name"]) for f in found] == [
        ("tracked_leaf", "x"), ("tracked_result", "y"), ("untracked_off", "z"),
        ("untracked_taken_out", "w"), ("untracked_taken_out", "c")]
    assert found[2].values["block"] == "torch.no_grad()" and found[2].values["line"] == "5"
    assert found[3].values["how"] == ".detach()"
    # a flag read is not a read of .grad: nothing is said of a gradient that stays None
    assert ".grad` stays None" not in text_for(found, "en") and ".grad" not in text_for(found, "en")


def test_only_what_the_line_establishes_is_said() -> None:
    """Recording switched off by a statement, not a block (learner16 en-c5c29d2b: "none of
    its inputs requires grad" would be false); a view made under no_grad that is a leaf and
    requires grad was not "created with requires_grad=True" (learner11 en-89505d6f); a name
    whose .grad is explained gets no second word on its flags."""
    switched = watch("import torch\nx = torch.tensor([1.], requires_grad=True)\n"
                     "torch.set_grad_enabled(False)\ny = x * 2\nprint(y.requires_grad)\n"
                     "torch.set_grad_enabled(True)")
    assert switched is not None
    found = facts(switched, [_seen(5, "y", rg=False)])
    assert [f.key for f in found] == ["untracked_off"]
    assert found[0].values["block"] == "torch.set_grad_enabled(False)"
    view = watch("import torch\na = torch.tensor(1., requires_grad=True)\nb = a.clone()\n"
                 "with torch.no_grad():\n    c = b.expand((1, 1))\nprint(c.requires_grad)")
    assert view is not None
    assert facts(view, [_seen(6, "c")]) == []
    both = watch("import torch\nb = torch.ones(3, requires_grad=True).view(3, 1)\n"
                 "print(b.requires_grad)\nb.sum().backward()\nprint(b.grad)")
    assert both is not None
    found = facts(both, [_seen(3, "b", leaf=False, grad_fn="ViewBackward0", backwards=0),
                         _seen(5, "b", leaf=False, grad_fn="ViewBackward0", grad_none=True)])
    assert [f.key for f in found] == ["non_leaf", "hidden_leaf"]


def test_a_tensor_made_by_a_constructor_is_said_to_be_a_copy() -> None:
    watched = watch("import torch\np = torch.ones(2, requires_grad=True)\n"
                    "q = torch.tensor([1.0, 2.0])\nprint(q.requires_grad)")
    assert watched is not None
    found = facts(watched, [_seen(4, "q", rg=False)])
    assert [f.key for f in found] == ["untracked_made"]
    assert "copies" in text_for(found, "en") and "复制" in text_for(found, "zh")


@pytest.fixture(scope="module")
def tutor(sandbox: Sandbox) -> Tutor:
    return Tutor(load_course(), runner=sandbox)


def test_a_value_question_is_answered_from_the_facts_of_its_run(tutor: Tutor) -> None:
    text = tutor.ask(f"Why does the first print give None? What does this print?\n{VIEW}").text
    assert "None\ntensor([1., 1., 1., 1., 1.])" in text
    assert "`x1` is not a leaf" in text and "`ViewBackward0`" in text
    assert "Line 3 (`x1 = x1.view((-1, 1))`)" in text
    assert "holds their sum" not in text  # each backward() reached its own leaf
    twice = tutor.ask(f"{TWICE}\nWhat does this print, and why is the second one 9?").text
    assert "2 `backward()` calls" in twice and "`x.grad` holds their sum" in twice
    zh = tutor.ask(f"这段代码打印什么？为什么 a.grad 是 None？\n{HIDDEN}").text
    assert "`a` 不是叶子张量" in zh and "`MulBackward0`" in zh and "没有名字" in zh
    assert "`b` 是需要梯度的叶子张量" in zh
    assert not any(word in zh for word in ("Line ", "a leaf", "backward() calls"))


def test_the_facts_name_only_the_learners_names(tutor: Tutor) -> None:
    import re

    program = (
        "import torch\nalpha = torch.tensor(5.0, requires_grad=True) * 0.1\n"
        "beta = torch.tensor(2.0, requires_grad=True)\ngamma = alpha + beta\n"
        "gamma.backward()\nprint(alpha.grad, beta.grad)"
    )
    answer = tutor.ask(f"What does this print?\n{program}").text
    quoted = set(re.findall(r"`([A-Za-z_]\w*)", answer))
    assert {"alpha", "beta", "gamma"} <= quoted
    allowed = set(re.findall(r"[A-Za-z_]\w*", program)) | {"grad_fn", "MulBackward0",
                                                           "requires_grad", "backward"}
    assert quoted <= allowed, quoted - allowed


def test_only_one_backward_is_said_only_when_one_reached_the_tensor() -> None:
    watched = watch(TWICE)
    assert watched is not None
    found = facts(watched, [_seen(7, "x", backwards=2)], [Pass(("x",), 0), Pass(("x",), 0)])
    assert [f.key for f in found] == ["filled_plain"]
    once = facts(watched, [_seen(5, "x", backwards=1)], [Pass(("x",), 0)])
    assert [f.key for f in once] == ["filled"] and once[0].values["read"] == "5"


LATER_ERROR = """import torch
w = torch.randn(3, requires_grad=True)
x, y = w.double(), torch.ones(3)
out = (x * 2).sum()
out.backward()
print(x.grad)
out.backward()
"""


def test_names_bound_in_one_tuple_assignment_each_keep_their_own_value() -> None:
    watched = watch(LATER_ERROR)
    assert watched is not None
    bound = watched.bindings["x"][0]
    assert (bound.line, bound.hides_leaf) == (3, False)
    pair = watch("a, c = a.cuda(), b\nprint(a.grad)")
    assert pair is not None and pair.bindings["a"][0].rebinds
    assert not pair.bindings["c"][0].rebinds  # c is given b, not itself


def test_what_ran_before_an_error_still_says_why_a_grad_printed_none(tutor: Tutor) -> None:
    """The run prints None, then raises (a second backward through a freed graph): the
    learner asks about the None they saw, which the reads before the error explain."""
    answer = tutor.ask(f"It prints None for x.grad, why?\n```\n{LATER_ERROR}```").text
    assert "`x` is not a leaf" in answer and "`ToCopyBackward0`" in answer
    assert "stops here at line 7" in answer and "RuntimeError" in answer


def test_a_value_question_about_requires_grad_says_why_from_its_run(tutor: Tutor) -> None:
    text = tutor.ask(f"```\n{FLAGS}\n```\nWhat does this print?").text
    assert "True True False False False" in text
    assert "runs inside `torch.no_grad()`" in text and "`w = y.detach()`" in text
    zh = tutor.ask(f"```\n{FLAGS}\n```\n这段代码会打印什么？").text
    assert "关闭了记录" in zh and "Line " not in zh

