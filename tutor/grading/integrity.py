"""The grading integrity policy: what a graded submission may not use.

Grading compares data in the parent, so printing a fake verdict or patching ``torch.allclose``
in the learner's process changes nothing. What data comparison cannot catch is a submission
that fetches the truth instead of computing it: reading the lesson's YAML (the reference
solution) or the expected-values cache from disk, or escaping to the interpreter to do so.
Autograd exercises need none of that, so a graded submission may import only the modules
below and may not touch files, processes or the interpreter's internals. A violation is
reported with its line, and the submission is scored zero without being run.

This is defence in depth on top of the sandbox's process isolation, not a replacement for it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tutor.python_names import nodes

ALLOWED_MODULES = frozenset(
    {
        "torch",
        "numpy",
        "math",
        "cmath",
        "random",
        "statistics",
        "typing",
        "collections",
        "functools",
        "itertools",
        "operator",
        "dataclasses",
        "copy",
        "warnings",
        "time",
        "__future__",
    }
)

FORBIDDEN_CALLS = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "input",
        "breakpoint",
        "exit",
        "quit",
        "memoryview",
    }
)

FORBIDDEN_NAMES = frozenset({"__builtins__", "__loader__", "__spec__", "__file__"})

FORBIDDEN_ATTRIBUTES = frozenset(
    {
        # reaching the interpreter's internals
        "__subclasses__",
        "__bases__",
        "__base__",
        "__mro__",
        "__globals__",
        "__builtins__",
        "__code__",
        "__closure__",
        "__dict__",
        "__getattribute__",
        "__loader__",
        "__spec__",
        "__import__",
        "__reduce__",
        "__reduce_ex__",
        "__self__",
        "__func__",
        "f_globals",
        "f_locals",
        "f_back",
        "gi_frame",
        # modules re-exported by torch / numpy (``torch.os``, ``np.sys``...)
        "os",
        "sys",
        "subprocess",
        "builtins",
        "importlib",
        "ctypes",
        "io",
        "pathlib",
        "shutil",
        "socket",
        "_C",
        # reading files or loading code through torch / numpy
        "load",
        "loadtxt",
        "genfromtxt",
        "fromfile",
        "from_file",
        "memmap",
        "DataSource",
        "hub",
        "cpp_extension",
        "package",
        "serialization",
        "open_memmap",
        "fromregex",
        "lib",
        "load_library",
        # writing files, starting processes
        "save",
        "savetxt",
        "savez",
        "savez_compressed",
        "tofile",
        "multiprocessing",
        "distributed",
    }
)


@dataclass(frozen=True)
class Violation:
    line: int
    what: str


def _module_allowed(module: str) -> bool:
    return module.split(".", 1)[0] in ALLOWED_MODULES


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the code binds itself (``input = torch.ones(2)`` is not the builtin ``input``)."""
    bound: set[str] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound


def find_violations(tree: ast.AST) -> list[Violation]:
    """Every use of something outside the policy, in line order."""
    found: list[Violation] = []
    bound = _bound_names(tree)
    for node in nodes(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found += [
                Violation(line, f"import {alias.name}")
                for alias in node.names
                if not _module_allowed(alias.name)
            ]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or not _module_allowed(module):
                found.append(Violation(line, f"from {'.' * node.level}{module} import ..."))
            else:
                found += [
                    Violation(line, f"from {module} import {alias.name}")
                    for alias in node.names
                    if alias.name in FORBIDDEN_ATTRIBUTES or alias.name == "*"
                ]
        elif isinstance(node, ast.Name) and (
            node.id in FORBIDDEN_NAMES
            or (
                node.id in FORBIDDEN_CALLS
                and isinstance(node.ctx, ast.Load)
                and node.id not in bound
            )
        ):
            found.append(Violation(line, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            found.append(Violation(line, f".{node.attr}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "delattr", "hasattr"}
            and len(node.args) > 1
        ):
            attr = node.args[1]
            if not isinstance(attr, ast.Constant) or not isinstance(attr.value, str):
                found.append(Violation(line, f"{node.func.id}() with a computed name"))
            elif attr.value in FORBIDDEN_ATTRIBUTES or attr.value.startswith("__"):
                found.append(Violation(line, f"{node.func.id}(..., {attr.value!r})"))
    return sorted(set(found), key=lambda v: (v.line, v.what))
