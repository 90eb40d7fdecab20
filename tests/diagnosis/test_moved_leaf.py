"""A tensor made with requires_grad=True and converted on the same line: the name holds the
conversion's result, so its .grad stays None; the cause is the line that made it."""

from __future__ import annotations

from typing import Any

from tutor.diagnosis.reasoning import diagnose

CONVERTED = """import torch
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True).double()
x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
loss = (w * x).sum()
loss.backward()
print("gradient:", w.grad)
"""

MADE_RIGHT = CONVERTED.replace(
    "torch.tensor([0.5, -1.0, 2.0], requires_grad=True).double()",
    "torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)")

ON_GPU = """import torch
a = torch.tensor([1., 2., 3.], requires_grad=True).cuda()
(a * a).sum().backward()
print(a.grad)
"""


def test_the_line_that_converted_the_leaf_is_the_cause_and_its_fix_is_tried(
    sandbox: Any,
) -> None:
    found = diagnose(CONVERTED, sandbox.run(CONVERTED), sandbox)
    first = found[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "leaf-converted-after-requires-grad", 2, True)
    assert "torch.tensor([0.5, -1.0, 2.0]).double().requires_grad_()" in first.fix.en
    assert "`w`" in first.title.en and "第 2 行" in first.title.zh
    assert any("line 6 reads `w.grad`" in step.en for step in first.chain)
    # the warning's own diagnosis of line 6 is not said again
    assert all(d.id != "nonleaf-grad-warning" for d in found)


def test_a_leaf_made_where_it_belongs_has_nothing_to_diagnose(sandbox: Any) -> None:
    result = sandbox.run(MADE_RIGHT)
    assert not result.warnings and "gradient: tensor" in result.stdout
    assert all(d.id != "leaf-converted-after-requires-grad"
               for d in diagnose(MADE_RIGHT, result, sandbox))


def test_a_move_to_a_gpu_played_by_the_cpu_is_the_same_cause(sandbox: Any) -> None:
    from tutor.chat.cpu_standin import CudaOnCpu

    runner = CudaOnCpu(sandbox)
    first = diagnose(ON_GPU, runner.run(ON_GPU), runner)[0]
    assert (first.id, first.root_line, first.fix_verified) == (
        "leaf-converted-after-requires-grad", 2, True)
    assert "torch.tensor([1., 2., 3.]).cuda().requires_grad_()" in first.fix.en
