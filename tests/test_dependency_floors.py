"""The lowest versions pyproject.toml allows are the ones .ci/run tests.

``.ci/run`` runs the suite a second time on ``.ci/lowest-versions.txt``. A lower bound raised
in pyproject.toml without the pin makes that install fail; one lowered (or a pin raised)
would go untested: this test catches both. The packages the tests import must be installed
in that pass too (it once failed to collect for want of polib).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shlex
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
UNTESTED = {"torch"}  # a CPU build of an older torch is not to be had here


def lower_bounds() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
        assert len(floors) == 1, f"{line}: one lower bound (>=) expected"
        bounds[requirement.name] = floors[0]
    return bounds


def pins() -> dict[str, Version]:
    found = {}
    for line in (ROOT / ".ci" / "lowest-versions.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", line
            found[requirement.name] = Version(spec.version)
    return found


def test_every_lower_bound_is_the_version_ci_tests() -> None:
    bounds = {name: v for name, v in lower_bounds().items() if name not in UNTESTED}
    assert pins() == bounds


def test_ci_installs_the_lowest_versions() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-c .ci/lowest-versions.txt" in script


OPTIONAL = {"playwright", "pyte"}
"""Tests that need these skip, saying why, where they are not installed."""


def lowest_pass_words(marker: str) -> list[str]:
    """The words of the .ci/run command of the lowest-versions pass that holds ``marker``."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [ln for ln in script.splitlines() if marker in ln]
    return shlex.split(line)


def lowest_pass_packages() -> set[str]:
    """What .ci/run installs for the lowest-versions pass, beside the project itself."""
    words = lowest_pass_words("-c .ci/lowest-versions.txt")
    named = words[words.index("-e") + 2:]
    return {Requirement(word).name for word in named if not word.startswith("-")}


def lowest_pass_ignores() -> set[str]:
    words = lowest_pass_words(".venv-lowest/bin/python -m pytest")
    return {word.removeprefix("--ignore=") for word in words if word.startswith("--ignore=")}


def installed_with(names: set[str]) -> set[str]:
    """``names`` and every distribution they require, as installed here (normalised names)."""
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    seen: set[str] = set()
    todo = [norm(name) for name in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(norm(requirement.name))
    return seen


def test_the_lowest_pass_installs_what_the_tests_import() -> None:
    tests = ROOT / "tests"
    local = {"tests", *(p.stem for p in tests.rglob("*.py")),
             *(p.name for p in tests.rglob("*") if p.is_dir())}
    imported: dict[str, str] = {}
    for path in sorted(tests.rglob("*.py")):
        if str(path.relative_to(ROOT)) in lowest_pass_ignores():
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:  # the corpora hold programs that do not parse, on purpose
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local | OPTIONAL | {"tutor"}:
                    imported.setdefault(top, str(path.relative_to(ROOT)))
    distributions = importlib.metadata.packages_distributions()
    available = installed_with(set(lower_bounds()) | lowest_pass_packages())
    missing = {
        top: where for top, where in imported.items()
        if not any(re.sub(r"[-_.]+", "-", dist).lower() in available
                   for dist in distributions.get(top, [top]))
    }
    assert missing == {}, "add them to the lowest pass's install line in .ci/run"
