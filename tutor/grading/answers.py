"""Typed answers: what a learner types for an answer step, parsed safely (never eval'd).

Accepted forms: numbers, ``True``/``False``/``None``, nested lists or tuples of numbers
(``[[2., 0.], [1., 0.]]``, ``1, 3``), ``tensor([1., 3.])`` / ``torch.tensor(...)`` (a copy of
torch's printout works: ``requires_grad=True``, ``dtype=...``, ``device=...`` and
``grad_fn=<MmBackward0>`` are accepted and ignored), ``torch.Size([2])``, bare names such as
``MmBackward0`` or ``<MmBackward0 object at 0x...>``, and quoted strings.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tutor import syntax_tree
from tutor.errors import TutorError
from tutor.grading.feedback import msg
from tutor.i18n import Text
from tutor.python_names import dotted

AnswerKind = Literal["tensor", "sequence", "number", "bool", "none", "name", "string"]

_GRAD_FN_SUFFIX = re.compile(r",?\s*grad_fn\s*=\s*<[^<>]*>")
_OBJECT_REPR = re.compile(r"^<\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+object\s+at\s+0x[0-9a-fA-F]+)?\s*>$")
_TENSOR_CALLS = frozenset({"tensor", "torch.tensor", "Tensor", "torch.Tensor"})
_SIZE_CALLS = frozenset({"Size", "torch.Size"})
_IGNORED_KEYWORDS = frozenset({"requires_grad", "dtype", "device", "grad_fn"})
_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf}
MAX_ANSWER_CHARS = 20_000


class AnswerSyntaxError(TutorError):
    """The typed answer is not in a form we can read. ``text`` says which forms work."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


class ParsedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: AnswerKind
    value: Any = None
    """Nested lists for tensor/sequence, a scalar for number/bool, the name for name/string."""
    shape: list[int] | None = None
    dtype: str | None = None
    text: str = ""


def _fail(reason: str) -> AnswerSyntaxError:
    return AnswerSyntaxError(msg("answer_syntax", reason=reason))


def _literal(node: ast.AST) -> Any:
    """Numbers, bools and (nested) lists/tuples of them; nothing else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand)
        if isinstance(inner, bool) or not isinstance(inner, (int, float)):
            raise _fail("a sign goes before a number")
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Name) and node.id in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element) for element in node.elts]
    raise _fail(f"unexpected {type(node).__name__}")


def _shape(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    if not value:
        return [0]
    inner = [_shape(v) for v in value]
    if any(s != inner[0] for s in inner):
        raise _fail("rows of different lengths")
    return [len(value), *inner[0]]


def _plain_keyword_value(node: ast.AST) -> bool:
    """``True``, ``'cuda:0'``, ``torch.float64``: what torch prints after the data."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (bool, str))
    return dotted(node) is not None


def _tensor_call(node: ast.Call, name: str) -> ParsedAnswer:
    if len(node.args) != 1:
        raise _fail(f"{name}(...) takes one list of numbers")
    dtype = None
    for keyword in node.keywords:
        if keyword.arg not in _IGNORED_KEYWORDS:
            raise _fail(f"unknown argument {keyword.arg}=")
        if not _plain_keyword_value(keyword.value):
            raise _fail(f"{keyword.arg}= takes a plain value")
        if keyword.arg == "dtype":
            dtype = dotted(keyword.value)
    value = _literal(node.args[0])
    if name in _SIZE_CALLS:
        if not isinstance(value, list) or any(not isinstance(v, int) for v in value):
            raise _fail("torch.Size takes a list of whole numbers")
        return ParsedAnswer(kind="sequence", value=value, shape=[len(value)])
    return ParsedAnswer(kind="tensor", value=value, shape=_shape(value), dtype=dtype)


def parse_answer(typed: str) -> ParsedAnswer:
    """Parse what the learner typed. Raises :class:`AnswerSyntaxError` on anything else."""
    text = typed.strip()
    if not text:
        raise AnswerSyntaxError(msg("answer_empty"))
    if len(text) > MAX_ANSWER_CHARS:
        raise _fail("too long")
    obj = _OBJECT_REPR.match(text)
    if obj:
        return ParsedAnswer(kind="name", value=obj.group(1), text=text)
    cleaned = _GRAD_FN_SUFFIX.sub("", text)
    try:
        tree = syntax_tree.parse(cleaned, mode="eval")
    except SyntaxError as exc:
        raise _fail(f"not readable at column {exc.offset or '?'}") from None
    body = tree.body
    if isinstance(body, ast.Constant):
        value = body.value
        if value is None:
            return ParsedAnswer(kind="none", text=text)
        if isinstance(value, bool):
            return ParsedAnswer(kind="bool", value=value, text=text)
        if isinstance(value, (int, float)):
            return ParsedAnswer(kind="number", value=value, shape=[], text=text)
        if isinstance(value, str):
            return ParsedAnswer(kind="string", value=value, text=text)
        raise _fail(f"unexpected {type(value).__name__}")
    if isinstance(body, ast.Name) and body.id not in _SPECIAL_FLOATS:
        return ParsedAnswer(kind="name", value=body.id, text=text)
    if isinstance(body, ast.Call):
        name = dotted(body.func)
        if name in _TENSOR_CALLS or name in _SIZE_CALLS:
            return _tensor_call(body, name).model_copy(update={"text": text})
        raise _fail(f"{name or 'this'}(...) is not a value")
    if isinstance(body, ast.Attribute):
        name = dotted(body)
        if name and name.startswith("torch."):  # torch.float32 typed for a dtype
            return ParsedAnswer(kind="name", value=name, text=text)
        raise _fail(f"{name or 'an attribute'} is not a value")
    value = _literal(body)
    if isinstance(value, list):
        return ParsedAnswer(kind="sequence", value=value, shape=_shape(value), text=text)
    return ParsedAnswer(kind="number", value=value, shape=[], text=text)
