"""Anti-tamper: a submission cannot raise its score by attacking the grader.

Each attack is graded the normal way (``grade_step``), and, where the integrity policy would
stop it before it runs, also run for real past the policy (``evaluate`` on its actual run)
to show the next layer holds too: values are compared in the parent on plain data, the truth
comes from another process before the submission runs, cache entries are authenticated.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tutor.course.models import CodeStep, Lesson
from tutor.grading import ExpectedCache, grade_step
from tutor.grading.checks import evaluate, probes_for
from tutor.grading.expected import cache_key
from tutor.grading.integrity import find_violations
from tutor.grading.verdicts import expected_run
from tutor.sandbox import Limits, Sandbox

LIMITS = Limits(wall_time_s=3.0)
WRONG_BODY = "x = torch.ones(2, requires_grad=True)\nz = x + 2\nz.mean().backward()\n"
"""An honest wrong answer: x.grad is [0.5, 0.5] instead of [1., 1.]; it scores 3 of 5."""
HONEST_WRONG_SCORE = 3.0


def _step(lesson: Lesson) -> CodeStep:
    step = lesson.step("nonscalar")
    assert isinstance(step, CodeStep)
    return step


def _raw_verdict_score(lesson: Lesson, code: str, sandbox: Sandbox, cache: ExpectedCache):
    """Run the code for real, bypassing the integrity policy, and grade what it left."""
    step = _step(lesson)
    expected = expected_run(step, runner=sandbox, cache=cache)
    run = sandbox.run(code, probes=probes_for(step.checks), limits=LIMITS)
    checks = evaluate(step.checks, code, ast.parse(code), run, expected)
    return run, checks


ATTACKS = {
    "fake printed verdict": (
        "import torch\nimport json\n" + WRONG_BODY
        + 'print(json.dumps({"status": "pass", "score": 5, "max_score": 5}))\n'
        + 'print("All checks pass.")\n'
    ),
    "monkeypatch torch comparisons": (
        "import torch\n" + WRONG_BODY
        + "torch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
        + "torch.Tensor.__eq__ = lambda self, other: True\n"
        + "torch.isclose = lambda *a, **k: torch.ones(2, dtype=torch.bool)\n"
    ),
    "monkeypatch builtins": (
        "import torch\nimport builtins\n" + WRONG_BODY
        + "builtins.isinstance = lambda *a: True\nbuiltins.float = lambda *a: 1.0\n"
        + "builtins.abs = lambda *a: 0.0\nbuiltins.round = lambda *a, **k: 1.0\n"
    ),
    "forged result messages": (
        "import torch\nimport os\n" + WRONG_BODY
        + "forged = b'{\"outcome\": \"ok\", \"device\": \"cpu\", \"probes\": []}'\n"
        + "for fd in range(3, 64):\n"
        + "    try:\n        os.write(fd, forged)\n    except OSError:\n        pass\n"
        + "print('{\"outcome\": \"ok\", \"probes\": [{\"expr\": \"x.grad\"}]}')\n"
    ),
    "early os._exit": "import torch\nimport os\n" + WRONG_BODY + "os._exit(0)\n",
    "atexit tricks": (
        "import torch\nimport atexit\nimport os\n" + WRONG_BODY
        + "atexit.register(lambda: print('All checks pass.'))\n"
        + "atexit.register(lambda: os._exit(0))\n"
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_gains_nothing(
    name: str, seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    code = ATTACKS[name]
    verdict = grade_step(seed_lesson, _step(seed_lesson), code, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    assert verdict.status != "pass"
    assert verdict.score <= HONEST_WRONG_SCORE
    # past the policy, the attack really runs; it still gains nothing
    run, checks = _raw_verdict_score(seed_lesson, code, sandbox, shared_cache)
    value = next(c for c in checks if c.name == "value:x.grad")
    assert value.status != "pass", (run.outcome, value.message.en)
    assert sum(c.points for c in checks) <= HONEST_WRONG_SCORE


def test_monkeypatching_is_invisible_to_parent_comparison(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    code = ATTACKS["monkeypatch torch comparisons"]
    verdict = grade_step(seed_lesson, _step(seed_lesson), code, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    value = next(c for c in verdict.checks if c.name == "value:x.grad")
    assert value.message.en == "`x.grad` differs at [0]: got 0.5, expected 1.0."


def test_early_exit_scores_no_run_dependent_points(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    code = "import torch\n" + WRONG_BODY.replace("mean", "sum") + "raise SystemExit(0)\n"
    verdict = grade_step(seed_lesson, _step(seed_lesson), code, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    assert verdict.status == "error"
    assert all(c.points == 0 for c in verdict.checks if not c.name.startswith("ast:"))
    assert "exited early" in verdict.message.en


def test_reading_the_solution_from_disk_is_refused(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache, tmp_path: Path
) -> None:
    lesson_file = tmp_path / "seed.yaml"
    lesson_file.write_text(json.dumps(seed_lesson.model_dump(mode="json")), encoding="utf-8")
    thief = (
        "import json\n"
        f"lesson = json.load(open({str(lesson_file)!r}))\n"
        "step = [s for s in lesson['steps'] if s['id'] == 'nonscalar'][0]\n"
        "exec(step['solution'])\n"
    )
    verdict = grade_step(seed_lesson, _step(seed_lesson), thief, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    assert (verdict.status, verdict.score) == ("error", 0.0)
    assert "line 1 uses import json" in verdict.message.en
    assert "不允许" in verdict.message.zh


EVASIONS = {
    "getattr on builtins": "f = getattr(__builtins__, 'op' + 'en')\n",
    "torch.os": "import torch\ntorch.os.system('cat /etc/passwd')\n",
    "numpy loadtxt": "import numpy as np\nnp.loadtxt('lesson.yaml', dtype=str)\n",
    "subclasses walk": "k = ().__class__.__base__.__subclasses__()\n",
    "dunder import": "m = __import__('o' + 's')\n",
    "eval": "eval(\"__import__('os')\")\n",
    "relative import": "from . import secrets\n",
    "torch.load": "import torch\nw = torch.load('/tmp/expected.pt')\n",
    "from torch import os": "from torch import os\n",
    "vars()": "v = vars()\n",
    "torch.save over a file": "import torch\ntorch.save({}, 'lessons/01.yaml')\n",
    "numpy memmap": "import numpy\nm = numpy.lib.format.open_memmap('x')\n",
    "torch multiprocessing": "import torch\ntorch.multiprocessing.Process(target=print).start()\n",
}


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_integrity_policy_catches_evasions(name: str) -> None:
    assert find_violations(ast.parse(EVASIONS[name])), name


def test_integrity_policy_allows_ordinary_autograd_code() -> None:
    code = (
        "import torch\nimport torch.nn as nn\nimport numpy as np\nimport math, random\n"
        "from torch import autograd\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 1)\n    def forward(self, input):\n"
        "        return self.fc(input)\n"
        "input = torch.randn(3, 2)\nout = Net()(input).sum()\nout.backward()\n"
        "print(type(out.grad_fn).__name__, out.data.norm(), getattr(out, 'shape'))\n"
    )
    assert find_violations(ast.parse(code)) == []


def test_forged_cache_entry_is_not_trusted(
    seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    """A submission that writes a forged truth into the cache (here past the policy, for
    real) does not change what the next grading compares with."""
    step = _step(seed_lesson)
    cache_dir = tmp_path / "expected"
    ExpectedCache(cache_dir).solution_run(sandbox, step.solution, probes_for(step.checks), "cpu")
    key = cache_key(step.solution, probes_for(step.checks), "cpu")
    target = cache_dir / key[:2] / f"{key}.json"
    assert target.exists()
    # the forger runs the honest wrong answer and stores its run as the "truth"
    wrong = "import torch\n" + WRONG_BODY
    forged_truth = sandbox.run(wrong, probes=probes_for(step.checks)).model_dump_json()
    forger = (
        f"import pathlib\npathlib.Path({str(target)!r}).write_text("
        f"'0' * 64 + chr(10) + {forged_truth!r})\n"
    )
    # the sandbox may already stop the write (e.g. by running as another user); to test the
    # next layer regardless, the test then writes the forged entry itself
    sandbox.run(forger, limits=LIMITS)
    if not target.read_text().endswith(forged_truth):
        target.write_text("0" * 64 + "\n" + forged_truth)
    fresh = ExpectedCache(cache_dir)
    verdict = grade_step(seed_lesson, step, wrong, runner=sandbox, cache=fresh, limits=LIMITS)
    assert verdict.score == HONEST_WRONG_SCORE and verdict.status == "fail"
    assert fresh.runs == 1  # the forged entry was refused and the solution ran again
    # and through the normal path the forger is not even run
    refused = grade_step(seed_lesson, step, forger, runner=sandbox, cache=fresh)
    assert refused.status == "error" and refused.score == 0


HAND_SET = {
    "assign": "x.grad = torch.ones(2)\n",
    "setattr": "setattr(x, 'grad', torch.ones(2))\n",
    "augmented": "z.sum().backward()\nx.grad += 0\n",
    "data write": "z.mean().backward()\nx.grad.data = torch.ones(2)\n",
    "copy_": "z.mean().backward()\nx.grad.copy_(torch.ones(2))\n",
    "fill_": "z.mean().backward()\nx.grad.fill_(1.0)\n",
    "index": "z.mean().backward()\nx.grad[:] = 1.0\n",
    "init": "z.mean().backward()\ntorch.nn.init.ones_(x.grad)\n",
}


@pytest.mark.parametrize("name", sorted(HAND_SET))
def test_hand_set_grad_does_not_pass(
    name: str, seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    code = "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n" + HAND_SET[name]
    verdict = grade_step(seed_lesson, _step(seed_lesson), code, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    assert verdict.status == "fail", verdict.message
    by_name = {c.name: c for c in verdict.checks}
    assert by_name["ast:grad_from_backward"].status == "fail"
    assert by_name["value:x.grad"].points == 0
    assert verdict.score == 1.0  # only "runs without an error"


def test_zeroing_grad_is_not_hand_setting(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    code = (
        "import torch\nx = torch.ones(2, requires_grad=True)\nz = x + 2\n"
        "z.mean().backward()\nx.grad.zero_()\nx.grad = None\n(x + 2).sum().backward()\n"
    )
    verdict = grade_step(seed_lesson, _step(seed_lesson), code, runner=sandbox,
                         cache=shared_cache, limits=LIMITS)
    assert verdict.passed, [c.message.en for c in verdict.checks]


def test_hand_set_grad_voids_only_the_checks_of_that_gradient(
    seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    """Writing `x.grad` by hand must not cost a check about `y` (QA2 #23), and a
    grad_is_none check is labelled by what it means, not as an attribute torch lacks."""
    step = CodeStep.model_validate({
        "id": "two", "kind": "code", "title": "Two", "prompt": "x and y",
        "solution": "import torch\nx = torch.ones(2, requires_grad=True)\ny = torch.ones(2)\n"
                    "(x * y).sum().backward()\n",
        "checks": [
            {"kind": "value", "expr": "x.grad"},
            {"kind": "attribute", "expr": "y", "attribute": "grad_is_none"},
            {"kind": "ast", "rule": "grad_from_backward"},
        ],
    })
    lesson = seed_lesson.model_copy(update={"id": "hand-set", "steps": [step]})
    code = "import torch\nx = torch.ones(2, requires_grad=True)\ny = torch.ones(2)\n" \
           "x.grad = torch.ones(2)\n"
    verdict = grade_step(lesson, step, code, runner=sandbox, cache=shared_cache, limits=LIMITS)
    by_name = {c.name: c for c in verdict.checks}
    assert by_name["value:x.grad"].status == "fail"
    assert "Not counted" in by_name["value:x.grad"].message.en
    about_y = by_name["attribute:y.grad_is_none"]
    assert about_y.status == "pass", about_y.message.en
    assert about_y.label.en == "whether `y.grad` is None"
    assert about_y.label.zh == "`y.grad` 是否为 None"
    assert about_y.message.en == "`y.grad` is None, as expected."
    assert "grad_is_none" not in about_y.label.en + about_y.message.en + about_y.message.zh
