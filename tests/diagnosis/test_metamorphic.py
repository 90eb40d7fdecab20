"""The diagnosis does not depend on how a program is written: a few programs of the training
sets, each rewritten by every transform of ``metamorphic.py`` (renamed, in ``main()``, the loop
in a function, the model in a class, lines added before, a tensor made by a helper), must keep
their diagnosis, its root-cause line where the original's went, and a verified fix. The full
measure over every training program is ``benchmarks/bench_robustness.py``. The generator's own
tests come first (no sandbox)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.diagnosis.metamorphic import TRANSFORMS, Variant, reproduces, variants
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.reasoning import diagnose
from tutor.sandbox import Sandbox
from tutor.sandbox.models import RunResult

CORPUS = Path(__file__).parent / "corpus"
PROGRAMS = ["backward_on_float", "grad_of_intermediate", "int_requires_grad_arange",
            "item_rebuild", "conv_single_image", "nograd_block_eval_train",
            "twice_loop_outside", "mlp_wrong_width", "detached_feature"]


# -- the generator -------------------------------------------------------------------------
SMALL = """import torch
from torch import nn

def scale(t, factor=2.0):
    return t * factor

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(8, 3)
for step in range(3):
    opt.zero_grad()
    loss = scale(model(data), factor=0.5).mean()
    loss.backward()
    opt.step()
print(loss.item())
"""


def by_transform(code: str, roots: Sequence[int] = (), failing: Sequence[int] = ()
                 ) -> dict[str, Variant]:
    return {v.transform: v for v in variants(code, roots, failing)}


def test_every_transform_applies_and_each_variant_parses() -> None:
    made = by_transform(SMALL, [12])
    assert set(made) == set(TRANSFORMS)
    for variant in made.values():
        ast.parse(variant.code)
        assert variant.code != SMALL


def test_rename_changes_the_learners_names_and_never_torchs() -> None:
    renamed = by_transform(SMALL)["rename"].code
    for kept in ("torch.optim.SGD", "lr=0.1", ".zero_grad()", ".backward()", ".parameters()",
                 "nn.Linear(3, 1)", ".mean()", "range(3)"):
        assert kept in renamed, kept
    names = {n.id for n in ast.walk(ast.parse(renamed)) if isinstance(n, ast.Name)}
    assert not names & {"model", "opt", "data", "loss", "scale", "factor", "step"}, names
    # a keyword argument of the learner's own function is renamed with its parameter
    tree = ast.parse(renamed)
    scale_def = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    keywords = {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name) and n.func.id == scale_def.name
                for k in n.keywords}
    assert keywords == {scale_def.args.args[1].arg}


def test_a_moved_loop_takes_its_data_as_renamed_parameters() -> None:
    variant = by_transform(SMALL)["loop-function"]
    assert "def fit(opt_in, model_in, data_in):" in variant.code
    assert "loss = fit(opt, model, data)" in variant.code  # read after the loop: returned
    assert "    return loss" in variant.code
    assert variant.mapped([12]) == {13}


def test_lines_moved_or_shifted_keep_their_text() -> None:
    for path in sorted(CORPUS.glob("*.py")):
        code = path.read_text(encoding="utf-8")
        original = code.splitlines()
        for variant in variants(code):
            if variant.transform not in ("main", "prelude"):
                continue
            lines = variant.code.splitlines()
            for number, text in enumerate(original, start=1):
                for new in variant.mapped([number]):
                    assert lines[new - 1].strip() == text.strip(), (path.name, number)


def test_variants_are_deterministic() -> None:
    for path in sorted(CORPUS.glob("*.py"))[:20]:
        code = path.read_text(encoding="utf-8")
        assert variants(code, [5], [6]) == variants(code, [5], [6])


def test_the_model_moves_into_a_module_and_a_tensor_into_a_helper() -> None:
    made = by_transform(SMALL)
    module = made["module-class"].code
    assert "class Model(nn.Module):" in module and "self.layers = nn.Linear(3, 1)" in module
    assert "model = Model()" in module
    helper = made["tensor-helper"]
    assert "def make_data():\n    return torch.randn(8, 3)" in helper.code
    assert "data = make_data()" in helper.code
    lines = helper.code.splitlines()
    assert {lines[n - 1].strip() for n in helper.mapped([9])} == {
        "return torch.randn(8, 3)", "data = make_data()"}


def test_a_variant_reproduces_only_with_the_same_error_or_the_same_numbers() -> None:
    variant = by_transform(SMALL)["prelude"]
    ran = RunResult(outcome="ok", device="cpu", stdout="loss 0.25\n")
    assert reproduces(ran, RunResult(outcome="ok", device="cpu",
                                     stdout="--- start ---\nloss 0.25\n"), variant)
    assert not reproduces(ran, RunResult(outcome="ok", device="cpu", stdout="loss 0.5\n"),
                          variant)
    assert not reproduces(ran, RunResult(outcome="timeout", device="cpu"), variant)


# -- the diagnosis over them -----------------------------------------------------------------
@pytest.fixture(scope="module")
def originals(sandbox: Sandbox) -> dict[str, tuple[str, RunResult, Diagnosis]]:
    out = {}
    for name in PROGRAMS:
        code = (CORPUS / f"{name}.py").read_text(encoding="utf-8")
        result = sandbox.run(code)
        found = diagnose(code, result, sandbox)
        assert found and not found[0].generic, name
        out[name] = (code, result, found[0])
    return out


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_diagnosis_survives_the_rewrite(sandbox: Sandbox, originals: dict[
        str, tuple[str, RunResult, Diagnosis]], name: str, transform: str) -> None:
    code, result, want = originals[name]
    roots = [want.root_line or want.line or 0]
    failing = [f.line for f in result.error.traceback] if result.error else []
    variant = next((v for v in variants(code, roots, failing) if v.transform == transform),
                   None)
    if variant is None:
        pytest.skip(f"{transform} does not apply to {name}")
    run = sandbox.run(variant.code)
    assert reproduces(result, run, variant), (run.outcome, run.error)
    found = diagnose(variant.code, run, sandbox)
    got = found[0] if found else None
    assert got is not None and got.id == want.id, (got and got.id, variant.code)
    assert (got.root_line or got.line) in variant.mapped(roots), (got.root_line, variant.code)
    if want.fix_verified:
        assert got.fix_verified, (got.fix.en, variant.code)
