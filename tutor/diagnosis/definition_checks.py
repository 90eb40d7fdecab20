"""What a learner's class defines, read against what torch calls: a module whose ``forward``
torch cannot find (spelled another way, or indented into ``__init__`` so that it is a local
function there), and an initialiser applied to every tensor of a model, which meets the
one-dimensional biases and norm weights it cannot initialise.

Each change is tried by a re-run; only one that makes the program run is given.
"""

from __future__ import annotations

import ast
import difflib
import re

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Edit, Fix, indent_of
from tutor.diagnosis.flow import text
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T

NO_FORWARD = re.compile(r'Module \[(?P<cls>\w+)\] is missing the required "forward" function')
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


EXCEPTION_CHECKS: tuple[Check, ...] = (check_forward_not_found, check_init_on_vector)
SILENT_CHECKS: tuple[Check, ...] = ()
