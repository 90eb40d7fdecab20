"""The names an answer may show in code: the learner's, the lesson's, PyTorch's and Python's,
and the ones its own example defines.

An answer that says "your `netD`" to a learner who has no `netD`, or ``x.grad`` to one whose
code calls ``backward()`` on ``z``, is about someone else's program. Every identifier an
answer shows in code (inline spans and fenced blocks) is one of:

- the learner's: the question's words and pasted code, the editor's code and its last run;
- the lesson's: the current step's text and code, or a lesson passage the answer quotes;
- PyTorch's or Python's (:func:`api_names`): the members of torch's learner-facing
  namespaces, read from torch itself into ``api_names.txt`` (torch is not imported to answer
  a question), the module aliases of the usual imports, Python's builtins and keywords;
- defined by a block of the answer itself: an example that makes its own tensors may name
  them, in the block and in the prose around it.

Only the *root* of a dotted name needs a source (``model.fc1.weight``: ``model``): what
follows a dot is a member of whatever it is. A keyword in a call (``retain_graph=True``) is
a parameter of the call, never a variable. A span that does not parse as Python (a quoted
error message) names nothing.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tutor import syntax_tree

API_FILE = Path(__file__).with_name("api_names.txt")
ALIASES = frozenset({"torch", "nn", "F", "np", "optim", "math"})
"""The module names of the imports answers and learners write (``import torch.nn as nn``,
``import torch.nn.functional as F``, ``import numpy as np``, ``from torch import optim``)."""
CONVENTIONS = frozenset({"self", "cls", "_"})
"""Python's names for a method's own object and class, and for a value thrown away."""

_FENCE_RE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_SPAN_RE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_NAMESPACES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.parameter", "torch.nn.parallel", "torch.optim", "torch.optim.lr_scheduler",
    "torch.autograd", "torch.autograd.graph", "torch.autograd.functional",
    "torch.autograd.gradcheck", "torch.func", "torch.linalg", "torch.cuda", "torch.amp",
    "torch.distributions", "torch.utils.data", "torch.utils.checkpoint",
)
"""The modules a learner's autograd and training code calls into."""
_CLASS_HOMES = ("torch.nn", "torch.optim", "torch.autograd", "torch.utils.data", "torch.amp",
                "torch.distributions")
"""Classes defined under these modules (layers, optimizers, Function, DataLoader) also give
their members and annotated attributes (``weight``, ``in_features``); torch's own internal
classes (the JIT's graph nodes) give only their name."""


@dataclass(frozen=True)
class Shown:
    """One piece of code an answer shows."""

    text: str
    block: bool
    """A fenced block (else an inline span)."""
    lang: str = ""
    """A block's language ("python", or "" for a run's output)."""


def torch_names() -> tuple[set[str], set[str]]:
    """(the member names of torch's learner-facing namespaces, every parameter name of their
    callables), read from torch itself: what ``api_names.txt`` holds."""
    import importlib
    import inspect

    import torch  # only to write the file (and in its test): an answer never imports torch

    members: set[str] = set(dir(torch.Tensor)) | set(dir(torch._C._functions))
    params: set[str] = set()
    seen: set[int] = set()

    def signature_of(obj: object) -> None:
        try:
            signature = inspect.signature(obj)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            # a builtin's signature is the first line of its docstring: numpy(*, force=False)
            doc = getattr(obj, "__doc__", None)
            line = doc.strip().partition("\n")[0] if isinstance(doc, str) else ""
            params.update(re.findall(r"[(,]\s*\*?\s*([a-z_]\w*)\s*=", line))
            return
        params.update(p.name for p in signature.parameters.values()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def methods_of(cls: type) -> None:
        for name in dir(cls):
            if not name.startswith("_"):
                signature_of(getattr(cls, name, None))

    for module_name in _NAMESPACES:
        module = importlib.import_module(module_name)
        for name in dir(module):
            obj = getattr(module, name, None)
            members.add(name)
            if obj is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                if str(getattr(obj, "__module__", "")).startswith(_CLASS_HOMES):
                    members.update(dir(obj))
                    members.update(getattr(obj, "__annotations__", {}))
                    methods_of(obj)
                signature_of(obj)
            elif callable(obj):
                signature_of(obj)
        if module is torch.nn:
            members.update(dir(torch.nn.Module))
    methods_of(torch.Tensor)
    # what an instance holds besides its class's members (an optimizer's ``param_groups``,
    # BatchNorm's ``running_mean``): one instance of the usual layers and optimizers
    weight = torch.nn.Parameter(torch.zeros(1))
    for instance in (torch.nn.Linear(1, 1), torch.nn.Conv2d(1, 1, 1), torch.nn.BatchNorm1d(1),
                     torch.nn.Embedding(2, 1), torch.nn.LSTM(1, 1), torch.nn.Dropout(),
                     torch.optim.SGD([weight], lr=0.1), torch.optim.Adam([weight])):
        members.update(dir(instance))
    for method in (torch.Tensor.backward, torch.autograd.Function.forward,
                   torch.autograd.Function.backward, torch.autograd.Function.setup_context):
        signature_of(method)

    def public(names: Iterable[str]) -> set[str]:
        # a one-letter member (Dropout's ``p``) is never named alone: one letter is a variable
        return {n for n in names if not n.startswith("_") and len(n) > 1 and n.isidentifier()}

    return public(members), public(params) - public(members)


def write_api_names(path: Path = API_FILE) -> None:
    """Writes ``api_names.txt`` from the installed torch."""
    import torch

    members, params = torch_names()
    lines = [f"# torch {torch.__version__.split('+')[0]}: written by "
             "`python -c 'from tutor.chat.names import write_api_names; write_api_names()'`",
             "# members of torch's learner-facing namespaces, one a line; then, after [params],",
             "# the parameter names of their callables (a name only as a call's keyword)",
             *sorted(members), "[params]", *sorted(params)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@lru_cache(maxsize=1)
def _api() -> tuple[frozenset[str], frozenset[str]]:
    members: set[str] = set()
    params: set[str] = set()
    into = members
    for line in API_FILE.read_text(encoding="utf-8").splitlines():
        if line == "[params]":
            into = params
        elif line and not line.startswith("#"):
            into.add(line)
    python = set(dir(builtins)) | set(keyword.kwlist) | CONVENTIONS | ALIASES
    python |= {m for m in sys.stdlib_module_names if not m.startswith("_")}
    return frozenset(members | python), frozenset(params)


def api_names() -> frozenset[str]:
    """The names any answer may show alone: torch's (api_names.txt) and Python's."""
    return _api()[0]


def parameter_names() -> frozenset[str]:
    """The parameter names of torch's callables: shown as a call's keyword, never alone."""
    return _api()[1]


def shown(text: str) -> list[Shown]:
    """The code ``text`` shows: its fenced blocks, and the inline spans of its prose."""
    out: list[Shown] = []
    last = 0
    for fence in _FENCE_RE.finditer(text):
        out += [Shown(s, False) for s in _SPAN_RE.findall(text[last:fence.start()])]
        out.append(Shown(fence.group(2), True, fence.group(1).lower()))
        last = fence.end()
    out += [Shown(s, False) for s in _SPAN_RE.findall(text[last:])]
    return out


def _tree(code: str) -> ast.AST | None:
    """``code`` parsed: a statement, an expression, a block's header (``with
    torch.no_grad():``), a method named alone (``.zero_grad()``); None for what is no code."""
    code = code.strip()
    if code.startswith("."):  # a member named alone (``.grad``, ``.T``): of no name of ours
        code = "__member__." + code.lstrip(".")
    for candidate in (code, f"{code}\n    pass", f"({code})"):
        try:
            return syntax_tree.parse(candidate)
        except (SyntaxError, ValueError):
            continue
    return None


@dataclass(frozen=True)
class CodeNames:
    used: frozenset[str]
    """The roots the code reads (``model`` of ``model.fc1``, ``x``)."""
    defined: frozenset[str]
    """The names it binds: assigned, imported, defined, a loop's or a function's own."""
    keywords: frozenset[str]
    """The keywords of its calls (``retain_graph`` of ``backward(retain_graph=True)``)."""


@lru_cache(maxsize=4096)
def code_names(code: str) -> CodeNames:
    """What ``code`` names (empty when it is no code: a message, a shape, prose); kept, as
    the same spans (``backward()``, ``.grad``) come back in answer after answer."""
    tree = _tree(code)
    if tree is None:
        return CodeNames(frozenset(), frozenset(), frozenset())
    used: set[str] = set()
    defined: set[str] = set()
    keywords: set[str] = set()
    words = {w for pair in _HYPHENATED_RE.findall(code) for w in pair if w}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.alias):
            defined.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.keyword) and node.arg:
            keywords.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
    # Python's own special names (``__init__``), a name in another script (a Chinese word
    # standing for a value) and a hyphenated word (``nvidia-smi``) are not a program's names
    used = {n for n in used if n.isascii() and not _DUNDER_RE.fullmatch(n) and n not in words}
    return CodeNames(frozenset(used), frozenset(defined), frozenset(keywords))


_DUNDER_RE = re.compile(r"__\w+__")
_HYPHENATED_RE = re.compile(r"(?<![\w.])([A-Za-z]\w*)(?=-[A-Za-z])|(?<=[A-Za-z]-)([A-Za-z]\w*)")


def identifiers(text: str) -> frozenset[str]:
    """Every identifier-like word of ``text`` (a learner's question, code or output), as
    Python reads it (``rᵀ`` is ``rT``)."""
    return frozenset(re.findall(r"[A-Za-z_]\w*", unicodedata.normalize("NFKC", text)))


def introduced(text: str) -> frozenset[str]:
    """The names the blocks of an answer define (an example's own tensors)."""
    out: set[str] = set()
    for piece in shown(text):
        if piece.block:
            out |= code_names(piece.text).defined
    return frozenset(out)


def foreign(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """The names ``text`` shows in code that have no source: neither ``allowed`` (the
    learner's and the lesson's) nor PyTorch's or Python's nor defined by the answer's own
    blocks. A block without a language is a run's output, the learner's own."""
    ok = api_names() | introduced(text) | frozenset(allowed)
    params = parameter_names()
    found: list[str] = []
    for piece in shown(text):
        if piece.block and piece.lang not in ("python", "py"):
            continue
        names = code_names(piece.text)
        for name in sorted(names.used - names.defined - ok):
            if name not in found:
                found.append(name)
        for name in sorted(names.keywords - ok - params):
            # a keyword of a call of the learner's own function is theirs (their parameter)
            if name not in found and not piece.block:
                found.append(name)
    return found


_SHOWN_FIELDS = ("title", "hints", "body", "prompt", "starters", "choices", "code", "expr")
"""What a learner on a step sees of it (never its solution)."""


def step_names(step: object) -> frozenset[str]:
    """The names a lesson step shows the learner: its texts, starter code and hints."""
    return identifiers(" ".join(repr(getattr(step, f, "")) for f in _SHOWN_FIELDS))


_A_TENSOR = ("the tensor", "该张量")


def confine(text: str, allowed: Iterable[str], lang: str) -> str:
    """``text`` with every inline code span that names something without a source (see
    :func:`foreign`) said without it: a member of such a name keeps the member (``.float()``,
    "your model's ``.to(device)``" where the name is a part roles.yaml knows), the name alone
    becomes the part's words or ``...``, and the name inside an expression becomes ``...``.
    Fenced blocks are left as they are (an example defines its names; a run's output is the
    learner's). Where ``...`` would stand for an operand or a receiver (``... * x``,
    ``....device``), the code would say nothing a reader can follow: the sentence goes."""
    from tutor.chat.roles import fill_span, roles

    ok = api_names() | introduced(text) | frozenset(allowed)
    known = roles()

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        names = code_names(code)
        bad = names.used - names.defined - ok
        if not bad:
            return match.group(0)
        if code.strip() in bad and code.strip() not in known:
            return _A_TENSOR[lang == "zh"]  # a name alone: what it names, in words
        for name in sorted(bad, key=len, reverse=True):
            stand_in = f"{{{name}}}" if name in known else "..."
            code = re.sub(rf"(?<![\w.{{]){re.escape(name)}(?![\w}}])", stand_in, code)
        if code.startswith("...."):  # a member of a name said as the member alone
            code = code[3:]
        filled = fill_span(code, {}, lang)
        return _UNSAYABLE if elides_an_operand(filled) else filled

    out: list[str] = []
    last = 0
    for fence in _FENCE_RE.finditer(text):
        out.append(_without_unsayable(_SPAN_RE.sub(one, text[last:fence.start()])))
        out.append(fence.group(0))
        last = fence.end()
    out.append(_without_unsayable(_SPAN_RE.sub(one, text[last:])))
    return "".join(out)


_ELIDED_OPERAND_RE = re.compile(
    r"\.\.\.\.|\.\.\.\s*(?:\*\*|//|[-+*/@%])=?(?=\s)|(?:\*\*|//|[-+*/@%])\s*\.\.\.(?![\w.])")
"""``...`` as an operand, a receiver or an assignment's target (``... * x``, ``w - ...``,
``....device``, ``... += x``); an elided argument or assigned value (``SGD([...])``,
``x[0] = ...``, ``w -= ...``, ``inputs=...``) reads well."""


def elides_an_operand(code: str) -> bool:
    """Whether ``code`` (a span as shown) has ``...`` where an operand or receiver was."""
    return bool(_ELIDED_OPERAND_RE.search(code))


_UNSAYABLE = "\x00"
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|[。！？]|\n")


def _without_unsayable(prose: str) -> str:
    """``prose`` without each sentence that holds an unsayable span."""
    while (at := prose.find(_UNSAYABLE)) >= 0:
        ends = [m.end() for m in _SENTENCE_END_RE.finditer(prose, 0, at)]
        start = ends[-1] if ends else 0
        start += len(prose[start:at]) - len(prose[start:at].lstrip())
        after = _SENTENCE_END_RE.search(prose, at)
        end = len(prose) if after is None else after.end() - (after.group() == "\n")
        end += len(prose[end:]) - len(prose[end:].lstrip(" "))
        head = prose[:start]
        if end == len(prose) or prose[end] == "\n":
            head = head.rstrip(" ")  # the paragraph's last sentence went
        prose = head + prose[end:]
    return prose
