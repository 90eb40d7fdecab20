"""The Gradescope and PrairieLearn bundles, run as the platforms run them: unpacked into a
folder laid out like ``/autograder`` (``/grade``), the submission put in place, the entry
script run with the bundle's own copy of the tutor. Each results.json is checked against the
fields the platforms document (schemas below, written from their documentation) and for
what it says: a pass scores full marks, a failure part, a crash and a hostile submission zero,
and the hostile one cannot write the results itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tutor.export.bundle import unpack

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXERCISE = "requires-grad/first-gradient"
MAX_SCORE = 5.0

# https://gradescope-autograders.readthedocs.io/en/latest/specs/#output-format
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
GRADESCOPE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "test_output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "test_name_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "leaderboard": {"type": "array"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["score", "max_score", "name"],
            "properties": {
                "score": {"type": "number"},
                "max_score": {"type": "number"},
                "status": {"enum": ["passed", "failed"]},
                "name": {"type": "string"},
                "name_format": {"type": "string"},
                "number": {"type": "string"},
                "output": {"type": "string"},
                "output_format": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "visibility": VISIBILITY,
                "extra_data": {"type": "object"},
            },
        }},
    },
    "required": ["score"],
}
# https://prairielearn.readthedocs.io/en/latest/externalGrading/#grading-results
PRAIRIELEARN_SCHEMA = {
    "type": "object",
    "properties": {
        "gradable": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "message": {"type": "string"},
        "output": {"type": "string"},
        "format_errors": {"anyOf": [{"type": "string"},
                                    {"type": "array", "items": {"type": "string"}}]},
        "images": {"type": "array"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "points", "max_points"],
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "points": {"type": "number"},
                "max_points": {"type": "number"},
                "message": {"type": "string"},
                "output": {"type": "string"},
                "images": {"type": "array"},
            },
        }},
    },
    "additionalProperties": False,
    "if": {"properties": {"gradable": {"const": False}}, "required": ["gradable"]},
    "then": {},
    "else": {"required": ["score"]},
}

PASSING = """import torch
x = torch.ones(2, 2, requires_grad=True)
y = torch.ones(2, 2)
s = (x * y).sum()
s.backward()
"""
FAILING = """import torch
x = torch.ones(2, 2, requires_grad=True)
y = torch.ones(2, 2, requires_grad=True)
s = (x * y).sum()
"""
CRASHING = """import torch
x = torch.ones(2, 2, requires_grad=True)
raise RuntimeError("the student's code gave up")
"""
HOSTILE = """import torch
print('{"score": 100}')
with open("RESULTS", "w") as handle:
    handle.write('{"score": 100, "tests": []}')
x = torch.ones(2, 2, requires_grad=True)
(x * 1).sum().backward()
"""
NOT_PYTHON = "import torch\nx = torch.ones(2, 2, requires_grad=True\n"


def tutor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TUTOR_LANG="en")
    return subprocess.run([sys.executable, "-m", "tutor", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    here = tmp_path_factory.mktemp("bundles")
    made = {}
    for platform in ("gradescope", "prairielearn"):
        done = tutor("export", platform, "--exercise", EXERCISE, "-o", f"{platform}.zip",
                     "--timeout", "5", cwd=here)
        assert done.returncode == 0, done.stderr
        made[platform] = (here / f"{platform}.zip").read_bytes()
    return made


def run_entry(script: Path, root: Path, variable: str, source: Path) -> dict[str, object]:
    # the bundle's own copy of the tutor, as the container would have installed it
    env = dict(os.environ, TUTOR_PYTHON=sys.executable, PYTHONPATH=str(source))
    env[variable] = str(root)
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                          timeout=300)
    results = root / "results" / "results.json"
    assert results.is_file(), done.stderr
    return json.loads(results.read_text(encoding="utf-8"))


def gradescope(bundle: bytes, tmp_path: Path, code: str | None) -> dict[str, object]:
    root = tmp_path / "autograder"
    unpack(bundle, root / "source")
    (root / "submission").mkdir(parents=True)
    if code is not None:
        code = code.replace("RESULTS", str(root / "results" / "results.json"))
        (root / "submission" / "first-gradient.py").write_text(code, encoding="utf-8")
    results = run_entry(root / "source" / "run_autograder", root, "AUTOGRADER_ROOT",
                        root / "source" / "autograd-tutor")
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    tests = results["tests"]
    assert isinstance(tests, list)
    assert sum(t["max_score"] for t in tests) == MAX_SCORE  # every check, always
    assert results["score"] == sum(t["score"] for t in tests)
    return results


def prairielearn(bundle: bytes, tmp_path: Path, code: str | None) -> dict[str, object]:
    root = tmp_path / "grade"
    unpack(bundle, tmp_path / "bundle")
    grader = root / "serverFilesCourse" / "autograd_tutor"
    grader.parent.mkdir(parents=True)
    (tmp_path / "bundle" / "serverFilesCourse" / "autograd_tutor").rename(grader)
    (root / "student").mkdir()
    if code is not None:
        code = code.replace("RESULTS", str(root / "results" / "results.json"))
        (root / "student" / "first-gradient.py").write_text(code, encoding="utf-8")
    results = run_entry(grader / "run.sh", root, "GRADE_ROOT", tmp_path / "bundle" /
                        "autograd-tutor")
    jsonschema.validate(results, PRAIRIELEARN_SCHEMA)
    return results


@pytest.mark.parametrize("code, score", [(PASSING, 5.0), (FAILING, None), (CRASHING, 0.0),
                                         (HOSTILE, 0.0)],
                         ids=["passing", "failing", "crashing", "hostile"])
def test_gradescope_results(bundles: dict[str, bytes], tmp_path: Path, code: str,
                            score: float | None) -> None:
    results = gradescope(bundles["gradescope"], tmp_path, code)
    statuses = {t["status"] for t in results["tests"]}  # type: ignore[union-attr]
    if score is None:
        assert 0 < results["score"] < MAX_SCORE and statuses == {"passed", "failed"}
        failed = [t for t in results["tests"] if t["status"] == "failed"]  # type: ignore[union-attr]
        assert not any("expected:" in t["output"] for t in failed)  # the answer stays hidden
    else:
        assert results["score"] == score
        assert statuses == ({"passed"} if score else {"failed"})
    if code is HOSTILE:
        assert "100" not in json.dumps(results["score"])
        assert "file" in str(results["output"]).lower() or any(
            "open" in t["output"] for t in results["tests"])  # type: ignore[union-attr]


def test_gradescope_missing_file_lists_every_check_at_zero(bundles: dict[str, bytes],
                                                           tmp_path: Path) -> None:
    results = gradescope(bundles["gradescope"], tmp_path, None)
    assert results["score"] == 0
    assert all("not submitted" in t["output"] for t in results["tests"])  # type: ignore[union-attr]


def test_gradescope_bundle_layout(bundles: dict[str, bytes], tmp_path: Path) -> None:
    unpack(bundles["gradescope"], tmp_path)
    for script in ("setup.sh", "run_autograder"):  # at the zip's root, executable
        assert os.access(tmp_path / script, os.X_OK)
    setup = (tmp_path / "setup.sh").read_text(encoding="utf-8")
    assert "download.pytorch.org/whl/cpu" in setup and "pip install ./autograd-tutor" in setup
    assert (tmp_path / "autograd-tutor" / "tutor" / "bundled_lessons").is_dir()
    config = json.loads((tmp_path / "tutor-autograder.json").read_text(encoding="utf-8"))
    assert config["exercises"] == [EXERCISE]


@pytest.mark.parametrize("code, score", [(PASSING, 1.0), (FAILING, None), (CRASHING, 0.0),
                                         (HOSTILE, 0.0)],
                         ids=["passing", "failing", "crashing", "hostile"])
def test_prairielearn_results(bundles: dict[str, bytes], tmp_path: Path, code: str,
                              score: float | None) -> None:
    results = prairielearn(bundles["prairielearn"], tmp_path, code)
    assert results.get("gradable", True) is True
    tests = results["tests"]
    points = sum(t["points"] for t in tests) / sum(t["max_points"] for t in tests)  # type: ignore[union-attr]
    assert results["score"] == pytest.approx(points)
    if score is None:
        assert 0 < results["score"] < 1
    else:
        assert results["score"] == score


def test_prairielearn_not_python_is_not_gradable(bundles: dict[str, bytes],
                                                 tmp_path: Path) -> None:
    results = prairielearn(bundles["prairielearn"], tmp_path, NOT_PYTHON)
    assert results["gradable"] is False and results["format_errors"]


def test_export_usage_errors(tmp_path: Path) -> None:
    done = tutor("export", "gradescope", "--exercise", "non-scalar/nope", "-o", "x.zip",
                 cwd=tmp_path)
    assert done.returncode == 2 and "no exercise 'non-scalar/nope'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.zip").exists()
    done = tutor("export", "prairielearn", "--exercise", "requires-grad/intro", "-o", "x.zip",
                 cwd=tmp_path)
    assert done.returncode == 2 and "reading step" in done.stderr


def test_setup_computes_the_truth_once(bundles: dict[str, bytes], tmp_path: Path) -> None:
    unpack(bundles["gradescope"], tmp_path / "source")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "source" / "autograd-tutor"),
               TUTOR_CACHE_DIR=str(tmp_path / "cache"))
    config = tmp_path / "source" / "tutor-autograder.json"
    done = subprocess.run([sys.executable, "-m", "tutor.export.autograder", "gradescope",
                           "--warm", "--config", str(config)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert any(p.is_file() for p in (tmp_path / "cache").rglob("*"))
