"""What a run returns: output, probes, snapshots, graphs, errors, warnings, determinism."""

from __future__ import annotations

import threading

import pytest

from tutor.sandbox import DeviceError, Probe, Sandbox, TensorSnapshot, ValueSnapshot
from tutor.sandbox.protocol import FrameError, FrameReader, encode, split

SEED_MM = """import torch
x = torch.tensor([[1., 2.]], requires_grad=True)
w = torch.tensor([[1., 0.], [1., 1.]], requires_grad=True)
y = torch.mm(x, w)
z = y.sum()
z.backward(retain_graph=True)
"""


def tensor(result, expr: str) -> TensorSnapshot:
    probe = result.probe(expr)
    assert probe is not None and probe.error is None, probe
    assert isinstance(probe.value, TensorSnapshot)
    return probe.value


def test_probe_snapshots_of_the_seed_mm_example(sandbox: Sandbox) -> None:
    result = sandbox.run(SEED_MM, probes=["x", "y", "x.grad", "z.item()", "y.shape"])
    assert result.outcome == "ok", result
    x = tensor(result, "x")
    assert (x.shape, x.dtype, x.is_leaf, x.requires_grad) == ([1, 2], "torch.float32", True, True)
    assert x.grad is not None and x.grad.values == [[1.0, 2.0]]
    y = tensor(result, "y")
    assert y.grad_fn == "MmBackward0" and not y.is_leaf and y.grad is None
    assert tensor(result, "x.grad").values == [[1.0, 2.0]]
    item = result.probe("z.item()").value  # type: ignore[union-attr]
    assert isinstance(item, ValueSnapshot) and item.value == 5.0
    assert result.probe("y.shape").value.value == [1, 2]  # type: ignore[union-attr]
    assert result.warnings == []  # probing a non-leaf's grad warns nobody


def test_graph_probe_names_the_leaves(sandbox: Sandbox) -> None:
    result = sandbox.run(SEED_MM, probes=[Probe(expr="z", graph=True)])
    graph = result.probe("z").graph  # type: ignore[union-attr]
    assert graph is not None and graph.root == 0
    names = [node.name for node in graph.nodes]
    assert names[:2] == ["SumBackward0", "MmBackward0"]
    leaves = {node.leaf_name: node.leaf_shape for node in graph.nodes
              if node.name == "AccumulateGrad"}
    assert leaves == {"x": [1, 2], "w": [2, 2]}
    assert graph.nodes[1].next == [2, 3]


def test_probes_are_sent_only_after_the_code_ran(sandbox: Sandbox) -> None:
    code = ("import os, select\n"
            "seen = [fd for fd in range(3, 32) if os.path.exists(f'/proc/self/fd/{fd}')\n"
            "        and select.select([fd], [], [], 0)[0]]\n")
    result = sandbox.run(code, probes=["len(seen)", "'hidden' * 2"])
    assert result.probe("len(seen)").value.value == 0  # type: ignore[union-attr]
    assert result.probe("'hidden' * 2").value.value == "hiddenhidden"  # type: ignore[union-attr]


def test_probe_errors_are_separate(sandbox: Sandbox) -> None:
    result = sandbox.run("a = 1", probes=["b", "a + 1", "1 / 0"])
    assert result.outcome == "ok"
    assert result.probe("b").error.type == "NameError"  # type: ignore[union-attr]
    assert result.probe("a + 1").value.value == 2  # type: ignore[union-attr]
    assert result.probe("1 / 0").error.type == "ZeroDivisionError"  # type: ignore[union-attr]


def test_nan_inf_and_size_cap(sandbox: Sandbox) -> None:
    code = "import torch\nv = torch.tensor([float('nan'), float('inf'), -float('inf'), 1.0])\n"
    code += "big = torch.zeros(5000)\n"
    result = sandbox.run(code, probes=["v", "big"])
    assert tensor(result, "v").values == ["nan", "inf", "-inf", 1.0]
    big = tensor(result, "big")
    assert big.values is None and big.truncated and big.numel == 5000


def test_lone_surrogates_in_learner_strings_do_not_void_the_result(sandbox: Sandbox) -> None:
    # Valid Python strings that are neither UTF-8 nor strict JSON: they used to lose the
    # whole result ("exited"/"crashed" with nothing said).
    code = ('import warnings\ns = "a\\ud800b"\nwarnings.warn("w\\udfff")\n'
            'raise ValueError("bad \\ud800")\n')
    result = sandbox.run(code, probes=["s", "s + '!'"])
    assert result.outcome == "error", result
    assert result.error is not None and result.error.message == "bad ?"
    assert [warning.message for warning in result.warnings] == ["w?"]
    assert result.probe("s").value.value == "a?b"  # type: ignore[union-attr]
    assert result.probe("s + '!'").value.repr == "'a\\ud800b!'"  # type: ignore[union-attr]


def test_a_huge_int_does_not_void_the_result(sandbox: Sandbox) -> None:
    # Python cannot write a 5001-digit int as text by default: the result used to vanish.
    result = sandbox.run("big = 10**5000\nsmall = 2**70\n", probes=["big", "[big]", "small"])
    assert result.outcome == "ok", result
    assert result.probe("big").value.value is None  # type: ignore[union-attr]
    assert "ValueError" in result.probe("big").value.repr  # type: ignore[union-attr]
    assert result.probe("[big]").value.value is None  # type: ignore[union-attr]
    assert result.probe("small").value.value == 2**70  # type: ignore[union-attr]


def test_error_has_learner_line_traceback_and_tensor_locals(sandbox: Sandbox) -> None:
    code = ("import torch\n"
            "def step(t):\n"
            "    z = t * 2\n"
            "    z.backward()\n"
            "    return z\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "step(x)\n")
    result = sandbox.run(code)
    assert result.outcome == "error"
    error = result.error
    assert error is not None
    assert error.type == "RuntimeError"
    assert "scalar outputs" in error.message
    assert (error.line, error.source_line) == (4, "z.backward()")
    assert [(f.line, f.function) for f in error.traceback] == [(7, "<module>"), (4, "step")]
    assert set(error.locals) == {"t", "z"}
    assert error.locals["z"].shape == [2]  # type: ignore[union-attr]


def test_syntax_error_has_its_line(sandbox: Sandbox) -> None:
    result = sandbox.run("x = 1\ny = (2\n")
    assert result.outcome == "error"
    assert result.error is not None and result.error.type == "SyntaxError"
    assert result.error.line == 2


def test_warnings_are_captured_with_the_learner_line(sandbox: Sandbox) -> None:
    code = ("import torch, warnings\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "y = x * 2\n"
            "print(y.grad)\n"
            "warnings.warn('mine')\n")
    result = sandbox.run(code)
    assert result.outcome == "ok"
    assert [(w.category, w.line) for w in result.warnings] == [
        ("UserWarning", 4), ("UserWarning", 5)]
    assert "not a leaf" in result.warnings[0].message
    assert result.stderr == ""


def test_runs_are_deterministic(sandbox: Sandbox) -> None:
    code = ("import torch, random\nimport numpy as np\n"
            "print(torch.rand(3).tolist(), random.random(), np.random.rand())")
    first, second = sandbox.run(code), sandbox.run(code)
    assert first.outcome == "ok" and first.stdout == second.stdout


def test_every_run_has_one_torch_thread_whatever_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the server inherits the app's environment
    with Sandbox() as box:
        for _ in range(2):  # the first standby, and one forked after a run
            result = box.run("import torch\nprint(torch.get_num_threads())")
            assert result.stdout == "1\n", result


def test_device_is_bound_and_recorded(sandbox: Sandbox) -> None:
    result = sandbox.run("import torch\nt = torch.ones(1)", probes=["device", "t"])
    assert result.device == "cpu"
    assert result.probe("device").value.value == "cpu"  # type: ignore[union-attr]
    assert tensor(result, "t").device == "cpu"


def test_devices_and_resolution(sandbox: Sandbox) -> None:
    devices = sandbox.devices()
    assert devices[0] == "cpu"
    assert sandbox.resolve_device("auto") in devices
    assert sandbox.resolve_device(" CPU ") == "cpu"
    with pytest.raises(DeviceError) as caught:
        sandbox.resolve_device("tpu")
    assert "cpu" in str(caught.value) and caught.value.available == devices
    # a name that is no device at all says which names are, in both languages
    assert str(caught.value).startswith("unknown device 'tpu': use auto, cpu, cuda, cuda:N or mps")
    assert caught.value.message_in("zh").startswith("未知的设备 'tpu'")
    if "cuda:0" not in devices:
        with pytest.raises(DeviceError) as missing:
            sandbox.run("x = 1", device="cuda")
        assert "is not available here" in str(missing.value)
        assert "在本机不可用" in missing.value.message_in("zh")


def test_cancel_stops_a_run(sandbox: Sandbox) -> None:
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    result = sandbox.run("import time\ntime.sleep(60)", cancel=cancel)
    timer.cancel()
    assert result.outcome == "timeout"
    assert result.error is not None and result.error.type == "Cancelled"


def test_frames_reject_garbage_and_foreign_nonces() -> None:
    reader = FrameReader(max_frame=100)
    frame = encode(b"result", b"abc", b"{}")
    assert reader.feed(frame[:3]) == []
    [whole] = reader.feed(frame[3:])
    assert split(whole, b"abc") == (b"result", b"{}")
    with pytest.raises(FrameError):
        split(whole, b"other")
    with pytest.raises(FrameError):
        FrameReader(max_frame=100).feed(b"\xff\xff\xff\xff")


def test_random_numbers_match_a_fresh_seeded_interpreter(sandbox: Sandbox) -> None:
    """The standby's rehearsal and the server's warm-up leave no trace in the generators."""
    import random

    import numpy
    import torch

    torch.manual_seed(0)
    random.seed(0)
    numpy.random.seed(0)
    expected = [torch.rand(3).tolist(), random.random(), float(numpy.random.rand())]
    code = ("import torch, random\nimport numpy as np\n"
            "got = [torch.rand(3).tolist(), random.random(), float(np.random.rand())]\n")
    result = sandbox.run(code, probes=["got"])
    assert result.probe("got").value.value == expected  # type: ignore[union-attr]


def test_rehearsal_leaves_nothing_in_the_learner_namespace(sandbox: Sandbox) -> None:
    result = sandbox.run("names = sorted(k for k in globals() if not k.startswith('__'))",
                         probes=["names"])
    assert result.probe("names").value.value == ["device"]  # type: ignore[union-attr]


def test_code_larger_than_a_pipe_buffer_arrives_whole(sandbox: Sandbox) -> None:
    """The request is written before the run exists; what the pipe cannot take yet follows."""
    filler = "".join(f"v{i} = {i}\n" for i in range(30_000))  # ~300 kB of code
    result = sandbox.run(filler + "total = v0 + v29999\n", probes=["total"])
    assert result.outcome == "ok", result.error
    assert result.probe("total").value.value == 29_999  # type: ignore[union-attr]


def test_a_sandbox_for_few_runs_skips_sympy_and_still_runs_everything() -> None:
    with Sandbox(few_runs=True) as sandbox:
        cold = sandbox.run("import sys\nprint('sympy' in sys.modules)\n")
        assert cold.stdout == "False\n"  # not paid for up front by a one-shot command
        result = sandbox.run("import torch\nx = torch.ones(3, requires_grad=True)\n"
                             "(x * 2).backward(torch.tensor([0.1, 1.0, 0.0001]))\n"
                             "print(x.grad)\n")
    assert result.outcome == "ok", result.stderr
    assert result.stdout == "tensor([2.0000e-01, 2.0000e+00, 2.0000e-04])\n"


def test_a_sandbox_for_many_runs_has_sympy_ready(sandbox: Sandbox) -> None:
    assert sandbox.run("import sys\nprint('sympy' in sys.modules)\n").stdout == "True\n"


def test_a_sandbox_for_many_runs_has_torch_dynamo_ready(sandbox: Sandbox) -> None:
    # every optimizer imports torch._dynamo on first use: seconds a training program's run
    code = ("import sys\nimport torch\nwarm = 'torch._dynamo' in sys.modules\n"
            "opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\n"
            "opt.zero_grad()\nprint(warm)\n")
    result = sandbox.run(code)
    assert result.outcome == "ok", result.error
    assert result.stdout == "True\n"


def test_ops_that_read_the_cpu_topology_run(sandbox: Sandbox) -> None:
    # EmbeddingBag initialises cpuinfo, which reads /sys/devices/system/cpu: without it the
    # confined run raised "Failed to initialize cpuinfo!" where the learner's torch does not
    result = sandbox.run("import torch\nbag = torch.nn.EmbeddingBag(10, 4)\n"
                         "print(tuple(bag(torch.tensor([[1, 2]])).shape))\n")
    assert result.error is None, result.error
    assert result.stdout == "(1, 4)\n"


def test_the_rest_of_sys_stays_out_of_a_run(sandbox: Sandbox) -> None:
    if not sandbox.confinement().confined:
        pytest.skip("no namespaces here: the machine's /sys is what it is")
    result = sandbox.run("import os\nprint(os.path.exists('/sys/class'), "
                         "os.path.exists('/sys/devices/system/cpu/online'))\n")
    assert result.stdout == "False True\n"
