"""The child builds plain JSON, not models: each piece must be exactly a model's shape.

In-process (no sandbox): what the child would send is validated the way the parent does.
"""

from __future__ import annotations

import json

import torch

from tutor.sandbox.child import _probe, _result_json, error_info
from tutor.sandbox.models import (
    ErrorInfo,
    Graph,
    ProbeResult,
    RunResult,
    TensorSnapshot,
    ValueSnapshot,
)
from tutor.sandbox.snapshots import graph, snapshot, tensor_snapshot


def _namespace() -> dict[str, object]:
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    y = (x * 3).sum()
    y.backward(retain_graph=True)
    return {"x": x, "y": y, "n": float("nan"), "size": x.shape}


def test_snapshots_and_graphs_are_model_shaped() -> None:
    ns = _namespace()
    x = TensorSnapshot.model_validate(tensor_snapshot(ns["x"]))
    assert x.grad is not None and x.grad.values == [[3.0, 3.0]]
    assert ValueSnapshot.model_validate(snapshot(ns["n"])).value == "nan"
    assert ValueSnapshot.model_validate(snapshot(ns["size"])).value == [1, 2]
    drawn = Graph.model_validate(graph(ns["y"], ns))
    assert [node.name for node in drawn.nodes][:2] == ["SumBackward0", "MulBackward0"]
    assert Graph.model_validate(graph(ns["x"], ns)).root is None


def test_probes_errors_and_results_are_model_shaped() -> None:
    ns = _namespace()
    lines = ["x = 1"]
    ok = ProbeResult.model_validate(_probe({"expr": "y", "graph": True}, ns, lines))
    assert ok.graph is not None and ok.error is None
    failed = ProbeResult.model_validate(_probe({"expr": "missing"}, ns, lines))
    assert failed.error is not None and failed.error.type == "NameError"
    try:
        exec(compile("z = (x * x).sum()\nz.backward()\nz.backward()\n", "<learner>", "exec"), ns)
    except RuntimeError as exc:
        error = error_info(exc, ["z = (x * x).sum()", "z.backward()", "z.backward()"])
    info = ErrorInfo.model_validate(error)
    assert info.line == 3 and "z" in info.locals
    payload = _result_json("error", "cpu", error, [{"category": "UserWarning", "message": "m",
                                                    "line": 2}], [ok.model_dump()], None, "2")
    result = RunResult.model_validate_json(payload)
    assert result.error == info and result.probes == [ok]
    assert json.loads(payload)["outcome"] == "error"
