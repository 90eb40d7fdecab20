"""The lowest versions pyproject.toml allows are the ones .ci/run tests.

``.ci/run`` runs the suite a second time on ``.ci/lowest-versions.txt``. A lower bound raised
in pyproject.toml without the pin makes that install fail; one lowered (or a pin raised)
would go untested: this test catches both.
"""

from __future__ import annotations

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
