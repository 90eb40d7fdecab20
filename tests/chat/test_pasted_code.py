"""Code pasted into a forum post is read as the Python it was: the marks copying adds
(a code block's indentation, a lost first indent, an interactive session's prompts, Python 2's
print) are taken away only where the code did not parse, and code that parses is kept."""

from __future__ import annotations

import pytest

from tutor.chat.pasted_code import as_python
from tutor.chat.snippets import pasted_blocks, program_to_diagnose, snippet
from tutor.python_names import parses

BLOCK_INDENT = """\
    import torch
    x = torch.ones(2, requires_grad=True)
    y = (x * 3).sum()
    y.backward()
    print(x.grad)"""

FIRST_LINE_LOST = """\
h = self.fc(x)
        if self.training:
            h = self.drop(h)
        out = h.relu()"""

SESSION = """\
>>> import torch
>>> a = torch.ones(2, requires_grad=True)
>>> b = a * 2
>>> b
tensor([2., 2.], grad_fn=<MulBackward0>)
>>> for i in range(2):
...     b = b + i
...
>>> print(b.sum())
tensor(5., grad_fn=<SumBackward0>)"""

PYTHON2 = """\
import torch
x = torch.ones(3, requires_grad=True)
for i in xrange(2):
    y = (x * i).sum()
print x.grad
print"""


@pytest.mark.parametrize("code", [BLOCK_INDENT, FIRST_LINE_LOST, SESSION, PYTHON2],
                         ids=["block-indent", "first-line-lost", "session", "python2"])
def test_what_copying_broke_parses_after_repair(code: str) -> None:
    assert not parses(code)
    assert parses(as_python(code))


def test_block_indent_keeps_the_programs_own_indentation() -> None:
    repaired = as_python(BLOCK_INDENT)
    assert repaired.splitlines()[0] == "import torch"
    assert repaired.splitlines()[-1] == "print(x.grad)"


def test_a_lost_first_indent_puts_the_lines_after_it_beside_it() -> None:
    assert as_python(FIRST_LINE_LOST).splitlines() == [
        "h = self.fc(x)", "if self.training:", "    h = self.drop(h)", "out = h.relu()"]


def test_a_session_keeps_its_statements_and_drops_what_it_printed() -> None:
    repaired = as_python(SESSION)
    assert "tensor(" not in repaired
    assert repaired.splitlines() == [
        "import torch", "a = torch.ones(2, requires_grad=True)", "b = a * 2", "b",
        "for i in range(2):", "    b = b + i", "", "print(b.sum())"]


def test_python2_print_and_xrange_become_python3() -> None:
    repaired = as_python(PYTHON2)
    assert "print(x.grad)" in repaired
    assert "for i in range(2):" in repaired
    assert repaired.splitlines()[-1] == "print()"


def test_xrange_in_code_that_parses_is_range_unless_the_code_defines_it() -> None:
    assert as_python("for i in xrange(3):\n    pass") == "for i in range(3):\n    pass"
    own = "def xrange(n):\n    return [n]\nfor i in xrange(3):\n    pass"
    assert as_python(own) == own


def test_code_that_parses_is_never_changed() -> None:
    code = "    \n" + "print = 3\nprint\n"  # valid as it is: no repair
    assert as_python(code) == code
    assert as_python("x = 1\n") == "x = 1\n"


def test_code_no_repair_mends_is_returned_as_pasted() -> None:
    code = "require 'nn'\nlocal x = torch.Tensor(3)"
    assert as_python(code) == code


def test_an_indented_post_is_a_program_the_chat_can_run() -> None:
    question = ("Why is x.grad None after backward? My code:\n\n" + BLOCK_INDENT.replace(
        "    y = (x * 3).sum()", "    y = (x.detach() * 3).sum()") + "\n")
    blocks = pasted_blocks(question, inline=False)
    assert blocks and parses(blocks[0]) and blocks[0].startswith("import torch")
    assert program_to_diagnose(question) is not None


def test_a_fenced_python2_snippet_is_run_as_what_it_prints() -> None:
    question = "What does this print?\n```\nimport torch\na = torch.ones(2)\nprint a * 2\n```"
    code = snippet(question)
    assert code is not None and "print(a * 2)" in code
