"""What a learner's class defines, read against what torch calls: a module whose ``forward``
torch cannot find (spelled another way, or indented into ``__init__`` so that it is a local
function there); a custom autograd Function whose ``backward`` returns fewer gradients than
its ``forward`` takes inputs, that has no ``backward``, or that gives ``save_for_backward`` a
Python value; an initialiser applied to every tensor of a model, which meets the
one-dimensional biases and norm weights it cannot initialise; a recurrent layer built
time-first whose output the class reads batch-first.

Each change is tried by a re-run; only one that makes the program run (a silent bug's: run
and print something else) is given.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of
from tutor.diagnosis.flow import call_name, text
from tutor.diagnosis.verify import prints_else, runs_clean
from tutor.i18n import T, Text
from tutor.sandbox.models import RunResult

NO_FORWARD = re.compile(r'Module \[(?P<cls>\w+)\] is missing the required "forward" function')
GRAD_COUNT = re.compile(r"function (?P<fn>\w+)Backward returned an incorrect number of gradients "
                        r"\(expected (?P<n>\d+), got (?P<k>\d+)\)")
FAN = "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"


def check_forward_not_found(ctx: Ctx) -> list[Candidate]:
    found = NO_FORWARD.search(ctx.message)
    if found is None:
        return []
    cls = next((c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.ClassDef)
                and c.name == found.group("cls")), None)
    if cls is None:
        return []
    for node in ast.walk(cls):
        if not isinstance(node, ast.FunctionDef):
            continue
        nested = node not in cls.body
        near = node.name != "forward" and node.name.lower() != "__init__" and bool(
            difflib.get_close_matches(node.name.lower(), ["forward"], n=1, cutoff=0.75))
        if nested and node.name == "forward":
            fix = _dedent_def(ctx.code, node, cls)
            facts = {"line": node.lineno, "name": cls.name, "detail": _parent_def(cls, node)}
            step = "forward-nested"
        elif not nested and near:
            fix = _rename_def(ctx.code, node)
            facts = {"line": node.lineno, "name": cls.name, "detail": node.name}
            step = "forward-misspelled"
        else:
            continue
        if fix is None:
            continue
        return [Candidate("forward-not-found", node.lineno, 0.9, [(step, facts)], [fix],
                          facts)]
    return []


def _parent_def(cls: ast.ClassDef, node: ast.FunctionDef) -> str:
    for method in cls.body:
        if isinstance(method, ast.FunctionDef) and node in ast.walk(method):
            return method.name
    return "__init__"


def _dedent_def(code: str, node: ast.FunctionDef, cls: ast.ClassDef) -> Fix | None:
    """The nested ``def forward`` and its body moved out to the class's level: each of its
    lines loses the indentation its parent method added."""
    lines = code.splitlines()
    method = next((m for m in cls.body if isinstance(m, ast.FunctionDef)), None)
    if method is None or node.end_lineno is None:
        return None
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    extra = len(indent_of(lines[start - 1])) - len(indent_of(lines[method.lineno - 1]))
    if extra <= 0:
        return None
    edits = []
    for number in range(start, node.end_lineno + 1):
        line = lines[number - 1]
        if line.strip() and not line.startswith(" " * extra):
            return None
        edits.append(Edit("replace", number, line[extra:] if line.strip() else line))
    return Fix(tuple(edits), runs_clean, T(
        f"on lines {start}-{node.end_lineno} move `def forward` out of `{_parent_def(cls, node)}`"
        " to the class's own level (one indentation less)",
        f"第 {start}-{node.end_lineno} 行把 `def forward` 从 `{_parent_def(cls, node)}` 中移出，"
        "放到类本身的层级（少缩进一级）"))


def _rename_def(code: str, node: ast.FunctionDef) -> Fix | None:
    line = code.splitlines()[node.lineno - 1]
    spelled = f"def {node.name}("
    if spelled not in line:
        return None
    edit = Edit("replace", node.lineno, line.replace(spelled, "def forward(", 1))
    return Fix((edit,), runs_clean, T(f"on line {node.lineno} name the method `forward`",
                                      f"第 {node.lineno} 行把方法命名为 `forward`"))


def check_init_on_vector(ctx: Ctx) -> list[Candidate]:
    """An initialiser that needs a matrix (xavier, kaiming) called in a loop over a model's
    tensors: it meets a bias or a norm's weight. The call is kept to tensors of two or more
    dimensions."""
    if FAN not in ctx.message:
        return []
    line, stmt = ctx.failing_statement()
    if stmt is None or not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call) \
            or not stmt.value.args:
        return []
    loop = ctx.flow.parents.get(stmt)
    while loop is not None and not isinstance(loop, (ast.For, ast.FunctionDef)):
        loop = ctx.flow.parents.get(loop)
    if loop is None:
        return []
    tensor = text(stmt.value.args[0])
    lines = ctx.code.splitlines()
    if stmt.lineno != stmt.end_lineno:
        return []
    pad = indent_of(lines[stmt.lineno - 1])
    guarded = f"{pad}if {tensor}.dim() > 1:\n{pad}    {lines[stmt.lineno - 1].strip()}"
    fix = Fix((Edit("replace", stmt.lineno, guarded),), runs_clean, T(
        f"on line {line} initialise only tensors of two or more dimensions: "
        f"`if {tensor}.dim() > 1: ...`",
        f"第 {line} 行只初始化二维及以上的张量：`if {tensor}.dim() > 1: ...`"))
    facts = {"line": line, "name": tensor, "op": text(stmt.value.func)}
    return [Candidate("init-on-vector", line, 0.8, [("init-vector", facts)], [fix], facts)]


def check_backward_count(ctx: Ctx) -> list[Candidate]:
    """``backward`` must return one gradient per input of ``forward`` (None for an input
    that needs none: a flag, a mask, a tensor that does not require grad). The changes that
    put the Nones in each possible place are tried; only one after which every parameter
    and leaf the loss reaches gets its gradient is given, so a gradient handed to the wrong
    input is not. A backward that returns nothing returns the gradients it computed, named
    after the inputs (``grad_w`` for ``w``)."""
    found = GRAD_COUNT.search(ctx.message)
    if found is None:
        return []
    n, k = int(found.group("n")), int(found.group("k"))
    cls = next((c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.ClassDef)
                and c.name == found.group("fn")), None)
    methods = {m.name: m for m in (cls.body if cls is not None else [])
               if isinstance(m, ast.FunctionDef)}
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None:
        return []
    inputs = [a.arg for a in forward.args.args[1:]]
    if len(inputs) != n or k >= n:
        return []
    returns = [r for r in ast.walk(backward) if isinstance(r, ast.Return)]
    fixes = _returns_all(ctx.code, backward, inputs) if not returns else \
        _nones_placed(ctx.code, returns, inputs, k)
    if not fixes:
        return []
    root = returns[0].lineno if returns else backward.lineno
    facts = {"line": root, "name": cls.name if cls else "", "count": n,
             "detail": ", ".join(f"`{i}`" for i in inputs)}
    return [Candidate("backward-count", root, 0.9, [("backward-count", facts)], fixes, facts)]


def _nones_placed(code: str, returns: list[ast.Return], inputs: list[str], k: int
                  ) -> list[Fix]:
    parts = []
    for ret in returns:
        value = ret.value
        values = value.elts if isinstance(value, ast.Tuple) else [value] if value else []
        if len(values) != k or ret.lineno != ret.end_lineno:
            return []
        parts.append([text(v) for v in values])
    fixes = []
    for places in itertools.combinations(range(len(inputs)), len(inputs) - k):
        edits, shown = [], ""
        for ret, given in zip(returns, parts, strict=True):
            rest = iter(given)
            shown = ", ".join("None" if i in places else next(rest) for i in range(len(inputs)))
            line = code.splitlines()[ret.lineno - 1]
            edits.append(Edit("replace", ret.lineno, f"{indent_of(line)}return {shown}"))
        nones = ", ".join(f"`{inputs[i]}`" for i in places)
        fixes.append(Fix(tuple(edits), _every_gradient, T(
            f"on line {returns[0].lineno} return one gradient per input of forward, None for "
            f"{nones}: `return {shown}`",
            f"第 {returns[0].lineno} 行为 forward 的每个输入各返回一个梯度，{nones} 返回 None："
            f"`return {shown}`")))
    return fixes


def _returns_all(code: str, backward: ast.FunctionDef, inputs: list[str]) -> list[Fix]:
    assigned = {t.id for s in ast.walk(backward) if isinstance(s, ast.Assign)
                for t in s.targets if isinstance(t, ast.Name)}
    grads = [next((g for g in (f"grad_{i}", f"{i}_grad", f"d{i}", f"grad_{i.lower()}")
                   if g in assigned), None) for i in inputs]
    last = backward.body[-1]
    if None in grads or last.lineno != last.end_lineno:
        return []
    shown = ", ".join(g for g in grads if g is not None)
    return [Fix((Edit("insert_after", last.lineno, f"return {shown}"),), _every_gradient, T(
        f"end backward (line {last.lineno}) by returning the gradients it computed, one per "
        f"input of forward: `return {shown}`",
        f"在 backward 末尾（第 {last.lineno} 行之后）返回它算出的梯度，forward 的每个输入各一个："
        f"`return {shown}`"))]


def _every_gradient(original: RunResult, fixed: RunResult) -> Text | None:
    """The program runs, and every parameter and leaf its backward reaches has a gradient."""
    ev = fixed.evidence
    if fixed.outcome != "ok" or ev is None:
        return None
    reached = [p for p in ev.params if p.requires_grad and p.reached]
    if not reached or any(p.grad_none for p in reached):
        return None
    return runs_clean(original, fixed)


NO_BACKWARD = "You must implement either the backward or vjp method for your custom autograd"
SAVED_NON_TENSOR = re.compile(r"save_for_backward can only save variables, but argument "
                              r"(?P<index>\d+) is of type (?P<kind>\w+)")


def _functions(ctx: Ctx) -> list[ast.ClassDef]:
    """The program's custom autograd Functions (classes based on ``...Function``)."""
    return [c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.ClassDef)
            and any(text(base).split(".")[-1] == "Function" for base in c.bases)]


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == name),
                None)


def check_function_without_backward(ctx: Ctx) -> list[Candidate]:
    """A custom Function with a forward and no backward, whose output the loss reaches:
    autograd has no formula for it. The change tried gives it a backward that passes no
    gradient through it (None for each input of forward), what a lookup such as a
    neighbour search or an index needs; where its inputs need a gradient, the derivative
    has to be written there."""
    if NO_BACKWARD not in ctx.message:
        return []
    out = []
    lines = ctx.code.splitlines()
    for cls in _functions(ctx):
        forward = _method(cls, "forward")
        if forward is None or _method(cls, "backward") or _method(cls, "vjp") or \
                forward.end_lineno is None:
            continue
        inputs = [a.arg for a in forward.args.args[1:]]
        pad = indent_of(lines[forward.lineno - 1])
        nones = ", ".join("None" for _ in inputs) + ("," if len(inputs) == 1 else "")
        added = (f"\n\n{pad}@staticmethod\n{pad}def backward(ctx, *grad_outputs):\n"
                 f"{pad}    return {nones}")
        last = lines[forward.end_lineno - 1]
        fix = Fix((Edit("replace", forward.end_lineno, last + added),), runs_clean, T(
            f"give `{cls.name}` a backward after line {forward.end_lineno} that passes no "
            f"gradient through it: `return {nones}` (one None for each input of forward; where "
            "an input needs a gradient from it, return its derivative there)",
            f"在第 {forward.end_lineno} 行之后给 `{cls.name}` 加一个不传梯度的 backward："
            f"`return {nones}`（forward 的每个输入一个 None；某个输入需要经过它的梯度时，"
            "就在那个位置返回它的导数）"))
        facts = {"line": cls.lineno, "name": cls.name, "fail_line": ctx.fail_line or 0}
        out.append(Candidate("function-without-backward", cls.lineno, 0.85,
                             [("function-no-backward", facts)], [fix], facts))
    return out


def check_saved_non_tensor(ctx: Ctx) -> list[Candidate]:
    """``ctx.save_for_backward`` given a Python value (an int, a flag): it keeps tensors
    only. The value goes on ``ctx`` as an attribute, and backward reads it from there."""
    found = SAVED_NON_TENSOR.search(ctx.message)
    _, failing = ctx.failing_statement()
    if found is None or failing is None:
        return []
    # the traceback may end at the line that applies the Function (its forward runs from
    # C): the save is in the forward of a Function that line names
    named = {n.id for n in ast.walk(failing) if isinstance(n, ast.Name)}
    saves = [c for cls in _functions(ctx) if failing in ast.walk(cls) or cls.name in named
             for c in ast.walk(cls) if isinstance(c, ast.Call)
             and call_name(c) == "save_for_backward"]
    index = int(found["index"])
    call = saves[0] if len(saves) == 1 else None
    stmt = ctx.flow.statement_of(call) if call is not None else None
    given = call.args[index] if call is not None and index < len(call.args) else None
    if call is None or stmt is None or len(call.args) < 2 or \
            not isinstance(given, ast.Name) or stmt.lineno != stmt.end_lineno:
        return []
    line = stmt.lineno
    name = given.id
    cls = next((c for c in _functions(ctx) if stmt in ast.walk(c)), None)
    backward = _method(cls, "backward") if cls is not None else None
    if backward is None:
        return []
    lines = ctx.code.splitlines()
    kept = ", ".join(text(a) for i, a in enumerate(call.args) if i != index)
    saving = lines[line - 1]
    pad = indent_of(saving)
    edits = [Edit("replace", line, saving.replace(text(call), f"{text(call.func)}({kept})", 1)
                  + f"\n{pad}ctx.{name} = {name}")]
    for node in ast.walk(backward):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Tuple) and text(node.value).endswith("saved_tensors") \
                and node.lineno == node.end_lineno:
            names = node.targets[0].elts
            if index < len(names) and text(names[index]) == name:
                rest = ", ".join(text(n) for i, n in enumerate(names) if i != index)
                rest += "," if len(names) == 2 else ""
                unpack = lines[node.lineno - 1]
                edits.append(Edit("replace", node.lineno, f"{indent_of(unpack)}{rest} = "
                                  f"{text(node.value)}\n{indent_of(unpack)}{name} = ctx.{name}"))
    fix = Fix(tuple(edits), runs_clean, T(
        f"keep `{name}` on ctx, not in save_for_backward: `ctx.{name} = {name}` on line {line}"
        f", and `{name} = ctx.{name}` in backward",
        f"把 `{name}` 存在 ctx 上，而不是 save_for_backward：第 {line} 行写 `ctx.{name} = "
        f"{name}`，backward 里用 `{name} = ctx.{name}`"))
    facts = {"line": line, "name": name, "given": f"`{found['kind']}`"}
    return [Candidate("saved-non-tensor", line, 0.9, [("saved-non-tensor", facts)], [fix],
                      facts)]


RECURRENT = ("LSTM", "GRU", "RNN")


def check_rnn_read_batch_first(ctx: Ctx) -> list[Candidate]:
    """A recurrent layer built without ``batch_first=True`` (so it reads dimension 0 as time)
    whose output the class reads the batch-first way, ``out[:, -1]`` (the last step of each
    sequence when dimension 1 is time): the data is (batch, time, features), and the layer
    runs along the batch. ``batch_first=True`` is tried; it is given when the program then
    prints something else."""
    if ctx.error is not None:
        return []
    out = []
    for cls in (c for c in ast.walk(ctx.flow.tree) if isinstance(c, ast.ClassDef)):
        for node in ast.walk(cls):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute)
                    and isinstance(node.value, ast.Call)
                    and call_name(node.value).split(".")[-1] in RECURRENT):
                continue
            built = node.value
            if any(k.arg == "batch_first" and not (isinstance(k.value, ast.Constant)
                                                  and k.value.value is False)
                   for k in built.keywords) or built.lineno != built.end_lineno:
                continue
            layer = node.targets[0].attr
            read = _read_batch_first(cls, layer)
            if read is None:
                continue
            shown = text(built)
            keywords = [k for k in built.keywords if k.arg != "batch_first"]
            new = ast.unparse(ast.Call(built.func, built.args, [
                *keywords, ast.keyword("batch_first", ast.Constant(True))]))
            line = ctx.code.splitlines()[built.lineno - 1]
            if shown not in line:
                continue
            fix = Fix((Edit("replace", built.lineno, line.replace(shown, new, 1)),),
                      prints_else, T(f"on line {built.lineno} build it with `batch_first=True`"
                                      f": `{new}`",
                                      f"第 {built.lineno} 行构建时加上 `batch_first=True`："
                                      f"`{new}`"))
            facts = {"line": built.lineno, "name": layer, "fail_line": read.lineno,
                     "op": call_name(built).split(".")[-1], "expr": text(read)}
            out.append(Candidate("rnn-batch-first", built.lineno, 0.85,
                                 [("rnn-read-batch-first", facts)], [fix], facts))
    return out


def _read_batch_first(cls: ast.ClassDef, layer: str) -> ast.Subscript | None:
    """``out[:, -1]`` (or ``out[:, -1, :]``) of a name the class's call of ``self.layer``
    gave (``out, _ = self.lstm(x)``, ``out = self.lstm(x)[0]``)."""
    outputs: set[str] = set()
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        value, target = node.value, node.targets[0]
        if isinstance(value, ast.Subscript):
            value = value.value
        if not (isinstance(value, ast.Call) and text(value.func) == f"self.{layer}"):
            continue
        if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0],
                                                                         ast.Name):
            outputs.add(target.elts[0].id)
        elif isinstance(target, ast.Name):
            outputs.add(target.id)
    for node in ast.walk(cls):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                node.value.id in outputs and isinstance(node.slice, ast.Tuple) and \
                len(node.slice.elts) >= 2:
            first, second = node.slice.elts[:2]
            if isinstance(first, ast.Slice) and first.lower is None and first.upper is None \
                    and text(second) == "-1":
                return node
    return None


GRAD_SHAPE = re.compile(r"Function (?P<fn>\w+)Backward returned an invalid gradient at index "
                        r"(?P<index>\d+) - got \[(?P<got>[\d, ]*)\] but expected shape "
                        r"compatible with \[(?P<wanted>[\d, ]*)\]")


def check_backward_grad_shape(ctx: Ctx) -> list[Candidate]:
    """A custom Function's ``backward`` returns, for one input of ``forward``, a gradient of
    another shape than that input: the message says which input and both shapes; the
    source says which value backward returns there and the line that makes it. No change is
    tried (what shape the computation should have is the learner's); the line and the
    shapes to compare are the direction."""
    found = GRAD_SHAPE.search(ctx.message)
    if found is None:
        return []
    cls = next((c for c in _functions(ctx) if c.name == found["fn"]), None)
    backward = _method(cls, "backward") if cls is not None else None
    forward = _method(cls, "forward") if cls is not None else None
    if cls is None or backward is None or forward is None:
        return []
    index = int(found["index"])
    inputs = [a.arg for a in forward.args.args[1:]]
    returns = [r for r in ast.walk(backward) if isinstance(r, ast.Return) and r.value]
    if not returns or index >= len(inputs):
        return []
    value = returns[-1].value
    values = value.elts if isinstance(value, ast.Tuple) else [value]
    if index >= len(values):
        return []
    given = values[index]
    if given is None:
        return []
    root = returns[-1].lineno
    if isinstance(given, ast.Name):
        made = [s for s in ast.walk(backward) if isinstance(s, ast.Assign | ast.AugAssign)
                and given.id in {t.id for t in ast.walk(s) if isinstance(t, ast.Name)
                                 and isinstance(t.ctx, ast.Store)}]
        if made:
            root = max(made, key=lambda s: s.lineno).lineno
    got, wanted = f"({found['got']})", f"({found['wanted']})"
    facts: dict[str, object] = {"line": root, "name": text(given), "op": cls.name,
                                "param": inputs[index], "shape": got,
                                "target_shape": wanted, "fail_line": ctx.fail_line or 0}
    direction = T(
        f"Make `{text(given)}` (line {root}) the shape of `{inputs[index]}`, {wanted}: compare "
        f"the sizes and slices that make it with that shape; it has {got}.",
        f"让 `{text(given)}`（第 {root} 行）与 `{inputs[index]}` 形状相同，即 {wanted}："
        f"把得到它的尺寸和切片与这个形状对比；它现在是 {got}。")
    return [Candidate("backward-grad-shape", root, 0.85, [("grad-shape-returned", facts)],
                      [], facts, direction=direction, pinned=True)]


EXCEPTION_CHECKS: tuple[Check, ...] = (check_forward_not_found, check_backward_count,
                                       check_function_without_backward,
                                       check_saved_non_tensor, check_init_on_vector,
                                       check_backward_grad_shape)
SILENT_CHECKS: tuple[Check, ...] = (check_rnn_read_batch_first,)
