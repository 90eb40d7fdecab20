"""What the learner's own code already does, read from its source (AST), in their names.

"Does this perform gradient clipping?" with a training loop pasted, "should I also divide
the loss?" under code that divides the accumulated gradients: the answer starts from what
the code in front of the learner does ("your code already clips between `loss.backward()`
and `optimizer.step()`"), not from the general rule. Each fact here is a small reader of
the code's statements in source order; a card names the facts that bear on its question
(``code_facts`` in ``cards/*.yaml``) and ``code_facts.yaml`` words each fact, filled with
the learner's own statements.

The code is the question's pasted code (fenced, whole lines, statements written inline) or
the editor's (``snippets.learner_code``); pasted code is often a fragment, so each block is
parsed on its own and a block that does not parse is read line by line (a ``with
torch.no_grad():`` header still covers the lines indented under it). Nothing is run.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tutor import syntax_tree
from tutor.python_names import dotted

DATA = Path(__file__).with_name("code_facts.yaml")

_CLIP = ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_")


@dataclass(frozen=True)
class Event:
    """One call, assignment or block header of the learner's code, in source order."""

    order: int
    kind: str
    """"call", "assign" (``a = ...``), "augassign" (``a /= ...``) or "with"."""
    name: str
    """The call's dotted name (``torch.nn.utils.clip_grad_norm_``, ``loss.backward``), the
    assignment's target (``loss``, ``p.grad``), the with-item (``torch.no_grad``)."""
    text: str
    """The statement or call as the learner wrote it (spaces collapsed)."""
    node: ast.AST
    under_no_grad: bool = False


@dataclass(frozen=True)
class CodeFact:
    key: str
    """Its entry in code_facts.yaml."""
    values: dict[str, str]
    """The learner's statements that show it, by placeholder."""


def _segment(source: str, node: ast.AST) -> str:
    return " ".join((ast.get_source_segment(source, node) or "").split())


def _no_grad_item(node: ast.With) -> bool:
    return any(
        (dotted(i.context_expr.func) if isinstance(i.context_expr, ast.Call) else "") in
        ("torch.no_grad", "no_grad", "torch.inference_mode", "inference_mode")
        for i in node.items
    )


def _events_of(tree: ast.AST, source: str, start: int, no_grad: bool = False) -> list[Event]:
    """The events of ``tree``'s statements, in source order."""
    out: list[Event] = []

    def visit(node: ast.AST, under: bool) -> None:
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inside = under or (isinstance(node, ast.With) and _no_grad_item(node))
            for item in node.items:
                name = dotted(item.context_expr.func) if isinstance(
                    item.context_expr, ast.Call) else dotted(item.context_expr)
                out.append(Event(start + len(out), "with", name or "", _segment(source, item),
                                 node, under))
            for child in node.body:
                visit(child, inside)
            return
        if isinstance(node, ast.Assign):
            for target in node.targets:
                out.append(Event(start + len(out), "assign", dotted(target) or "",
                                 _segment(source, node), node, under))
        elif isinstance(node, ast.AugAssign):
            out.append(Event(start + len(out), "augassign", dotted(node.target) or "",
                             _segment(source, node), node, under))
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)] if isinstance(
            node, ast.stmt) and not isinstance(node, (ast.For, ast.While, ast.If, ast.Try,
                                                      ast.FunctionDef, ast.ClassDef)) else []
        for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
            out.append(Event(start + len(out), "call", _call_name(call), _segment(source, call),
                             call, under))
        for inner in ast.iter_child_nodes(node):
            if isinstance(inner, ast.stmt):
                visit(inner, under)

    for statement in getattr(tree, "body", []):
        visit(statement, no_grad)
    return out


def _call_name(call: ast.Call) -> str:
    name = dotted(call.func)
    if name is not None:
        return name
    if isinstance(call.func, ast.Attribute):  # (loss / n).backward(): the method's name
        return f"?.{call.func.attr}"
    return "?"


_HEADER_RE = re.compile(r"^\s*(with|for|if|while|def|class|else|elif|try|except)\b.*:\s*$")


def _lines_events(block: str, start: int) -> list[Event]:
    """A block that does not parse, read a line at a time; a ``with torch.no_grad():``
    header covers the lines indented under it."""
    out: list[Event] = []
    covering: list[int] = []  # indents of the no_grad headers that cover the next lines
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        covering = [i for i in covering if i < indent]
        code = line.strip()
        if _HEADER_RE.match(code):
            if code.startswith("with") and ("no_grad" in code or "inference_mode" in code):
                covering.append(indent)
            code += " pass"
        try:
            tree = syntax_tree.parse(code)
        except SyntaxError:
            continue
        out += _events_of(tree, code, start + len(out), no_grad=bool(covering))
    return out


def events(code: str) -> list[Event]:
    """The events of ``code`` (one block of code, or several joined by blank lines)."""
    blocks = [b for b in re.split(r"\n\s*\n(?=\S)", code) if b.strip()] if code else []
    out: list[Event] = []
    try:
        whole = textwrap.dedent(code)
        return _events_of(syntax_tree.parse(whole), whole, 0)
    except SyntaxError:
        pass
    for block in blocks:
        text = textwrap.dedent(block)
        try:
            out += _events_of(syntax_tree.parse(text), text, len(out))
        except SyntaxError:
            out += _lines_events(text, len(out))
    return out


# ---------------------------------------------------------------- the facts


def _calls(found: Iterable[Event], *suffixes: str) -> list[Event]:
    return [e for e in found if e.kind == "call" and e.name.rsplit(".", 1)[-1] in suffixes]


def _first_after(found: list[Event], after: Event) -> Event | None:
    return next((e for e in found if e.order > after.order), None)


def _last_before(found: list[Event], before: Event) -> Event | None:
    earlier = [e for e in found if e.order < before.order]
    return earlier[-1] if earlier else None


def _clip_between(found: list[Event]) -> dict[str, str] | None:
    backwards, steps = _calls(found, "backward"), _calls(found, "step")
    for clip in _calls(found, *_CLIP):
        backward, step = _last_before(backwards, clip), _first_after(steps, clip)
        if backward is not None and step is not None:
            return {"clip": clip.text, "backward": backward.text, "step": step.text}
    return None


def _clip_after_step(found: list[Event]) -> dict[str, str] | None:
    backwards, steps = _calls(found, "backward"), _calls(found, "step")
    for clip in _calls(found, *_CLIP):
        step = _last_before(steps, clip)
        backward = _last_before(backwards, clip)
        if step is not None and (backward is None or backward.order < step.order) and \
                _first_after(steps, clip) is None:
            return {"clip": clip.text, "step": step.text}
    return None


def _detach_arg(call: ast.Call) -> str | None:
    for arg in call.args:
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and \
                arg.func.attr == "detach":
            return dotted(arg.func.value)
    return None


def _detaches_input(found: list[Event]) -> dict[str, str] | None:
    """A model called on a detached tensor (``netD(fake.detach())``), or a tensor made by a
    call and detached at once (``fake = G(noise).detach()``)."""
    for e in found:
        if e.kind == "call" and isinstance(e.node, ast.Call):
            inner = _detach_arg(e.node)
            if inner and not e.name.startswith("torch."):
                return {"call": e.text, "detached": inner}
        if e.kind == "assign" and isinstance(e.node, ast.Assign):
            value = e.node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                    value.func.attr == "detach" and isinstance(value.func.value, ast.Call):
                return {"call": e.text, "detached": e.name}
    return None


def _backward_targets(found: list[Event]) -> set[str]:
    out = set()
    for e in _calls(found, "backward"):
        receiver = e.name.rsplit(".", 1)[0]
        if receiver and receiver != "?":
            out.add(receiver)
    return out


def _divides_loss(found: list[Event]) -> dict[str, str] | None:
    """The loss divided before ``backward()``: a name backward is called on, or one that
    says it is a loss (a fragment may end before its ``backward()``)."""
    targets = _backward_targets(found) | {e.name for e in found if "loss" in e.name.lower()}
    for e in found:
        node = e.node
        if e.kind == "augassign" and isinstance(node, ast.AugAssign) and \
                isinstance(node.op, ast.Div) and e.name in targets:
            return {"statement": e.text}
        if e.kind == "assign" and isinstance(node, ast.Assign) and e.name in targets and \
                isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div) and \
                _is_loss_value(node.value.left, e.name):
            return {"statement": e.text}
        if e.kind == "call" and e.name == "?.backward" and isinstance(node, ast.Call):
            receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
            if isinstance(receiver, ast.BinOp) and isinstance(receiver.op, ast.Div):
                return {"statement": e.text}
    return None


def _is_loss_value(node: ast.expr, name: str) -> bool:
    """Whether ``node``, the left of a division assigned to ``name``, is the loss itself
    (``loss / n``, ``criterion(out, y) / n``), not a loss defined as a ratio (``1 / a``)."""
    return (isinstance(node, ast.Name) and node.id == name) or isinstance(node, ast.Call)


def _divides_grad(found: list[Event]) -> dict[str, str] | None:
    for e in found:
        node = e.node
        if e.name.endswith((".grad", ".grad.data")):
            if e.kind == "augassign" and isinstance(node, ast.AugAssign) and \
                    isinstance(node.op, ast.Div):
                return {"statement": e.text}
            if e.kind == "assign" and isinstance(node, ast.Assign) and \
                    isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div):
                return {"statement": e.text}
        if e.kind == "call" and re.search(r"\.grad(\.data)?\.div_$", e.name):
            return {"statement": e.text}
    return None


def _zero_grad_between(found: list[Event]) -> dict[str, str] | None:
    """``zero_grad()`` after a ``backward()`` and before the ``step()`` that follows it: it
    clears the gradients the step was to use."""
    backwards, steps = _calls(found, "backward"), _calls(found, "step")
    for zero in _calls(found, "zero_grad"):
        backward, step = _last_before(backwards, zero), _first_after(steps, zero)
        earlier_step = _last_before(steps, zero)
        if backward is not None and step is not None and (
            earlier_step is None or earlier_step.order < backward.order
        ):
            return {"zero": zero.text, "backward": backward.text, "step": step.text}
    return None


def _zero_grad_before(found: list[Event]) -> dict[str, str] | None:
    if _zero_grad_between(found) is not None:
        return None
    backwards = _calls(found, "backward")
    for zero in _calls(found, "zero_grad"):
        backward = _first_after(backwards, zero)
        if backward is not None:
            return {"zero": zero.text, "backward": backward.text}
    return None


def _rebinds_under_no_grad(found: list[Event]) -> dict[str, str] | None:
    """``w = w - lr * w.grad`` inside ``torch.no_grad()``: a new tensor takes the name."""
    for e in found:
        if e.kind == "assign" and e.under_no_grad and isinstance(e.node, ast.Assign) and e.name:
            read = {dotted(n) for n in ast.walk(e.node.value) if isinstance(n, ast.Name)}
            if e.name in read and "." not in e.name:
                return {"statement": e.text, "name": e.name}
    return None


def _updates_in_place_under_no_grad(found: list[Event]) -> dict[str, str] | None:
    for e in found:
        if e.under_no_grad and (
            (e.kind == "augassign" and "." not in e.name.removesuffix(".data"))
            or (e.kind == "call" and e.name.endswith(("sub_", "add_")) and ".grad." not in e.name)
        ):
            return {"statement": e.text}
    return None


def _logs_item(found: list[Event]) -> dict[str, str] | None:
    for e in found:
        if e.kind == "augassign" and isinstance(e.node, ast.AugAssign) and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "item" for n in ast.walk(e.node.value)
        ):
            return {"statement": e.text}
    return None


def _sums_loss_tensor(found: list[Event]) -> dict[str, str] | None:
    targets = _backward_targets(found)
    for e in found:
        if e.kind == "augassign" and isinstance(e.node, ast.AugAssign) and \
                isinstance(e.node.value, ast.Name) and e.node.value.id in targets:
            return {"statement": e.text, "loss": e.node.value.id}
    return None


def _keyword_true(found: list[Event], keyword: str) -> dict[str, str] | None:
    for e in _calls(found, "backward", "grad"):
        if isinstance(e.node, ast.Call) and any(
            k.arg == keyword and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in e.node.keywords
        ):
            return {"call": e.text}
    return None


def _eval_and_no_grad(found: list[Event]) -> dict[str, str] | None:
    evals = _calls(found, "eval")
    no_grad = [e for e in found if e.kind == "with" and e.name.endswith(("no_grad",
                                                                        "inference_mode"))]
    if evals and no_grad:
        return {"eval": evals[0].text, "no_grad": no_grad[0].text}
    return None


def _optimizer_before_move(found: list[Event]) -> dict[str, str] | None:
    optimizers = [e for e in _calls(found, *_OPTIMIZERS) if "parameters" in e.text]
    moves = [e for e in _calls(found, "cuda", "to") if "." in e.name]
    for opt in optimizers:
        later = [m for m in moves if m.order > opt.order and m.name.rsplit(".", 1)[0] in opt.text]
        if later:
            return {"optimizer": opt.text, "move": later[0].text}
    return None


_OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS", "Adamax")


def _builds_modules(node: ast.expr) -> bool:
    """Whether ``node`` calls a class (``nn.Linear(...)``, ``Block()``): a layer is built."""
    return any(
        isinstance(n, ast.Call) and (_call_name(n).rsplit(".", 1)[-1][:1].isupper())
        for n in ast.walk(node)
    )


def _modules_in_plain_container(found: list[Event]) -> dict[str, str] | None:
    """Layers kept in a plain list or dict attribute (``self.layers = [nn.Linear(...)]``,
    ``self.heads = {k: Head() for k in keys}``): ``nn.Module`` registers none of them."""
    for e in found:
        node = e.node
        if e.kind != "assign" or not isinstance(node, ast.Assign) or "." not in e.name:
            continue
        value = node.value
        if isinstance(value, (ast.List, ast.ListComp, ast.Tuple)) and _builds_modules(value):
            return {"statement": e.text, "name": e.name, "container": "nn.ModuleList"}
        if isinstance(value, (ast.Dict, ast.DictComp)) and _builds_modules(value):
            return {"statement": e.text, "name": e.name, "container": "nn.ModuleDict"}
    return None

READERS: dict[str, Callable[[list[Event]], dict[str, str] | None]] = {
    "clips-between-backward-and-step": _clip_between,
    "clips-after-step": _clip_after_step,
    "detaches-input": _detaches_input,
    "divides-loss": _divides_loss,
    "divides-grad": _divides_grad,
    "zero-grad-between-backward-and-step": _zero_grad_between,
    "zero-grad-before-backward": _zero_grad_before,
    "rebinds-under-no-grad": _rebinds_under_no_grad,
    "updates-in-place-under-no-grad": _updates_in_place_under_no_grad,
    "logs-item": _logs_item,
    "sums-loss-tensor": _sums_loss_tensor,
    "retains-graph": lambda found: _keyword_true(found, "retain_graph"),
    "creates-graph": lambda found: _keyword_true(found, "create_graph"),
    "eval-and-no-grad": _eval_and_no_grad,
    "optimizer-before-move": _optimizer_before_move,
    "modules-in-plain-container": _modules_in_plain_container,
}
"""Each fact's reader: the learner's statements that show it, or None."""


def find(code: str, keys: Iterable[str]) -> list[CodeFact]:
    """The facts of ``keys`` that ``code`` shows, in the order of ``keys``."""
    keys = list(keys)
    if not keys or not code.strip():
        return []
    found = events(code)
    out = []
    for key in keys:
        values = READERS[key](found)
        if values is not None:
            out.append(CodeFact(key, values))
    return out


@lru_cache(maxsize=1)
def _texts() -> dict[str, Any]:
    from tutor.data_cache import read_data

    data: dict[str, Any] = read_data(DATA)["facts"]
    return data


def worded(fact: CodeFact, lang: str) -> str:
    """The fact in ``lang``, in the learner's statements (each shown as code)."""
    entry = _texts()[fact.key]
    values = {k: v.replace("`", "'") for k, v in fact.values.items()}
    return str(entry[lang]).strip().format(**values)
