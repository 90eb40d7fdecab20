"""The layers of DESIGN.md, kept by a test rather than by memory.

Imports point down only: the core (course, sandbox, i18n, errors) knows nothing above it;
the services (grading, diagnosis, chat, progress, ...) never reach the faces (tui, cli);
the core and services never import textual; the course layer never imports torch. An
import inside a function counts as one at the top of the file, and so does
``importlib.import_module("tutor....")``: a lazy import is the same dependency. A name
imported from a package counts as its module (``from tutor import tui`` is ``tutor.tui``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "tutor"

CORE_PACKAGES = (
    "tutor.course",
    "tutor.sandbox",
    "tutor.grading",
    "tutor.diagnosis",
    "tutor.chat",
    "tutor.progress",
)

LAYERS: dict[str, int] = {
    "tutor": 0,
    "tutor.errors": 0,
    "tutor.cjk": 0,
    "tutor.i18n": 0,
    "tutor.markdown_fences": 0,
    "tutor.paths": 0,
    "tutor.python_names": 0,
    "tutor.syntax_tree": 0,
    "tutor.records": 0,
    "tutor.yaml_read": 0,
    "tutor.course": 0,
    "tutor.sandbox": 0,
    "tutor.grading": 1,
    "tutor.diagnosis": 1,
    "tutor.chat": 1,
    "tutor.progress": 1,
    "tutor.learning": 1,
    "tutor.workspace": 1,
    "tutor.export": 1,
    "tutor.tui": 2,
    "tutor.cli": 2,
    "tutor.__main__": 2,
}
"""Layer of each top-level part of the package; a module may import its own layer or below."""

INDEPENDENT = {
    ("tutor.course", "tutor.sandbox"): "the course knows nothing of torch or processes",
    ("tutor.sandbox", "tutor.course"): "the sandbox knows nothing of lessons",
}
"""Same-layer pairs that must not import each other."""

BASE_MODULES = ("tutor.errors", "tutor.i18n", "tutor.paths", "tutor.records", "tutor.yaml_read",
                "tutor.cjk", "tutor.markdown_fences", "tutor.python_names", "tutor.data_cache",
                "tutor.syntax_tree",
                "tutor.settings", "tutor.validation_zh")
"""The modules the course and the sandbox stand on: they import neither (no cycle through the
base layer, as ``paths`` once had through ``course.loader``)."""


def _fresh_interpreter(code: str) -> dict[str, object]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_core_packages_load_without_textual_or_the_faces():
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(CORE_PACKAGES)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = _fresh_interpreter(code)
    assert isinstance(loaded, list)
    bad = [
        name
        for name in loaded
        if name == "textual" or name.startswith(("textual.", "tutor.tui", "tutor.cli"))
    ]
    assert bad == []


def test_the_course_layer_loads_and_lints_without_torch():
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from tutor.course import load_course\n"
        "from tutor.course.lint import lint_paths\n"
        "from tutor.course.schema import lesson_json_schema\n"
        "load_course(Path('tests/fixtures/mini_course'))\n"
        "lint_paths([Path('tests/fixtures/mini_course')])\n"
        "lesson_json_schema()\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'numpy': 'numpy' in sys.modules}))\n"
    )
    assert _fresh_interpreter(code) == {"torch": False, "numpy": False}


def _layer_of(module: str) -> tuple[str, int] | None:
    parts = module.split(".")
    for size in (2, 1):
        key = ".".join(parts[:size])
        if key in LAYERS:
            return key, LAYERS[key]
    return None


def _module_name(path: Path) -> str:
    relative = path.relative_to(REPO).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_module_target(node: ast.Call) -> str | None:
    """The module ``importlib.import_module`` is called with, as far as its argument is a
    constant (``"tutor.chat"``; ``f"tutor.cli.{name}_cmd"`` gives ``tutor.cli``)."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rpartition(".")[0] or None
    return None


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    """Every import in the file, including ones inside functions (lazy imports count) and
    ``importlib.import_module`` calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = _import_module_target(node)
            if target is not None:
                found.append((node.lineno, target))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # Each name may be a module of its own: ``from tutor import tui`` is tutor.tui.
            found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names)
    return found


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "bundled_lessons" not in p.parts)


def test_every_module_belongs_to_a_layer():
    unknown = sorted({_module_name(p) for p in _sources() if _layer_of(_module_name(p)) is None})
    assert unknown == [], "add the new top-level modules to LAYERS in tests/test_layers.py"


def _wrong_imports(path: Path, module: str) -> list[str]:
    """The imports of ``path`` (as ``module``) that break the layers, one line each."""
    own = _layer_of(module)
    if own is None:
        return [f"{module} is in no layer"]
    own_key, own_layer = own
    wrong = []
    for line, target in _imports(path, module):
        if own_layer < 2 and (target == "textual" or target.startswith("textual.")):
            wrong.append(f"line {line}: {target} (the core never imports textual)")
        if own_key == "tutor.course" and target.split(".")[0] in ("torch", "numpy"):
            wrong.append(f"line {line}: {target} (the course layer knows nothing of torch)")
        other = _layer_of(target) if target.startswith("tutor") else None
        if other is None:
            continue
        other_key, other_layer = other
        if other_layer > own_layer:
            wrong.append(f"line {line}: {target} (layer {other_layer} above {own_layer})")
        reason = INDEPENDENT.get((own_key, other_key))
        if reason:
            wrong.append(f"line {line}: {target} ({reason})")
    return wrong


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_down_only(path: Path):
    assert _wrong_imports(path, _module_name(path)) == []


def _beneath_base(target: str) -> bool:
    """Whether a base module may import ``target``: not the course, the sandbox or above."""
    found = _layer_of(target) if target.startswith("tutor.") else None
    return found is None or (found[1] == 0 and found[0] not in ("tutor.course", "tutor.sandbox"))


@pytest.mark.parametrize("module", BASE_MODULES)
def test_the_base_modules_import_neither_course_nor_sandbox(module: str):
    path = PACKAGE / f"{module.removeprefix('tutor.')}.py"
    wrong = [f"line {line}: {target}" for line, target in _imports(path, module)
             if not _beneath_base(target)]
    assert wrong == []


def test_lazy_and_dynamic_imports_are_seen(tmp_path: Path):
    """The checker itself: an upward import inside a function, or by import_module, is
    found (so the rule above cannot pass by not looking)."""
    source = tmp_path / "m.py"
    source.write_text(
        "import importlib\n"
        "def f(name):\n"
        "    from tutor.tui import app\n"
        "    importlib.import_module('tutor.cli.run_cmd')\n"
        "    importlib.import_module(f'tutor.cli.{name}_cmd')\n",
        encoding="utf-8",
    )
    found = [target for _, target in _imports(source, "tutor.course.m")]
    assert found == ["importlib", "tutor.tui.app", "tutor.cli.run_cmd", "tutor.cli"]


@pytest.mark.parametrize("line", [
    "import tutor.tui",
    "import tutor.tui.app as app",
    "from tutor.tui import app",
    "from tutor import tui",
    "from .. import cli",
    "from ..tui.app import TutorApp",
    "import textual",
])
def test_a_function_level_import_that_goes_up_fails_the_rule(tmp_path: Path, line: str):
    """The rule, not only the finder: a grading module that imports a face (or textual)
    inside a function breaks the layers, however the import is spelled."""
    source = tmp_path / "m.py"
    source.write_text(f"def f():\n    {line}\n", encoding="utf-8")
    assert _wrong_imports(source, "tutor.grading.m") != []
    source.write_text("def f():\n    from tutor.course import load_course\n", encoding="utf-8")
    assert _wrong_imports(source, "tutor.grading.m") == []


def _protocols(path: Path) -> list[str]:
    """The ``typing.Protocol`` classes ``path`` declares."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and any(
        (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")) == "Protocol"
        for base in node.bases)]


def test_each_protocol_is_declared_once():
    """One home for an interface: a layer that needs the sandbox's ``Runner`` imports it
    (a second, narrower ``Runner`` in the diagnosis drifted from the real one)."""
    homes: dict[str, list[str]] = {}
    for path in _sources():
        for name in _protocols(path):
            homes.setdefault(name, []).append(str(path.relative_to(REPO)))
    assert "Runner" in homes
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}
