"""A program written for a GPU, run with the CPU in its place (``cuda_on_cpu``): a move to
CUDA is still a copy that autograd records, a module's parameters stay leaves, and the run
with the option off still stops where a machine without a GPU stops it."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.sandbox import Sandbox

GPU_CODE = """import torch
a = torch.tensor([1., 2., 3.], requires_grad=True).cuda()
(a * 2).sum().backward()
b = torch.ones(2, requires_grad=True, device="cuda:0")
c = torch.ones(2, requires_grad=True).to(torch.device("cuda"))
net = torch.nn.Linear(2, 1).cuda()
out = net(torch.randn(4, 2, device="cuda")).sum()
out.backward()
print(a.grad, a.is_leaf, b.is_leaf, c.is_leaf, net.weight.is_leaf, net.weight.grad is None)
"""


def test_a_move_to_cuda_is_a_copy_on_the_cpu_in_its_place(sandbox: Sandbox) -> None:
    if "cuda:0" in sandbox.devices():
        pytest.skip("a real GPU runs this program as written")
    plain = sandbox.run(GPU_CODE)
    assert plain.error is not None and "CUDA" in plain.error.message
    result = sandbox.run(GPU_CODE, cuda_on_cpu=True, probes=["a.grad_fn"])
    assert result.outcome == "ok", result.error
    # as on a GPU: `a` is the copy, not the leaf; a factory on cuda makes a leaf; the
    # module's weight stays a leaf and gets its gradient
    assert result.stdout.strip() == "None False True False True False"
    probe = result.probe("a.grad_fn")
    assert probe is not None and "ToCopyBackward0" in str(probe.value)
    assert any("not a leaf" in w.message for w in result.warnings)


def test_an_instrumented_run_sees_the_stand_in_too(sandbox: Sandbox) -> None:
    if "cuda:0" in sandbox.devices():
        pytest.skip("a real GPU runs this program as written")
    result = sandbox.run(GPU_CODE, cuda_on_cpu=True, instrument=True)
    assert result.outcome == "ok" and result.evidence is not None


def test_code_that_pops_the_stand_in_still_gets_its_result(sandbox: Any) -> None:
    """The mode is a convenience, not a boundary: a program that takes it off the stack
    runs on without it, and the run still reports (the child never dies ending it)."""
    code = ("import torch\n"
            "torch._C._pop_torch_function_stack()\n"
            "print('popped')\n")
    result = sandbox.run(code, cuda_on_cpu=True)
    assert result.outcome in ("ok", "error") and result.outcome != "crashed", result
    assert "popped" in result.stdout
