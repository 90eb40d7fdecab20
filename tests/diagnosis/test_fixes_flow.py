"""The edits a tried fix makes, and the source facts the checks read."""

from __future__ import annotations

from tutor.diagnosis.fixes import Edit, apply
from tutor.diagnosis.flow import Flow

CODE = "a = 1\nwith ctx():\n    b = 2\n    c = 3\nd = 4\n"


def test_edits_replace_insert_move_delete_and_dedent() -> None:
    assert apply(CODE, (Edit("replace", 1, "a = 9"),)) == CODE.replace("a = 1", "a = 9")
    assert apply(CODE, (Edit("insert_before", 3, "z = 0"),)).splitlines()[2] == "    z = 0"
    moved = apply(CODE, (Edit("move_before", 5, to=3),)).splitlines()
    assert moved[2] == "    d = 4" and moved[-1] == "    c = 3"
    assert apply(CODE, (Edit("dedent_block", 2),)) == "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert apply(CODE, (Edit("delete", 5),)) == "a = 1\nwith ctx():\n    b = 2\n    c = 3\n"
    assert apply(CODE, (Edit("replace", 99, "x"),)) is None


def test_flow_finds_uncalled_methods_assignments_and_optimizers() -> None:
    flow = Flow.of("import torch\nm = M()\nopt = torch.optim.SGD(m.parameters(), lr=1)\n"
                   "m = M()\nfor i in range(3):\n    loss = m(i)\n    loss.backward\n")
    assert flow is not None
    assert [s.lineno for s in flow.uncalled("backward")] == [7]
    assert [s.lineno for s in flow.assignments["m"]] == [2, 4]
    (stmt, name, _), = flow.optimizers()
    assert (stmt.lineno, name) == (3, "opt")
    assert 4 in flow.slice_lines("loss", 7)
    assert flow.loops_of(flow.statement_at(6))[0].lineno == 5


def test_unparsable_code_has_no_flow() -> None:
    assert Flow.of("def (:\n") is None


def test_a_module_with_a_class_is_read_without_crashing() -> None:
    # bound_names walked a class's (absent) arguments: AttributeError on ClassDef.args
    from tutor.diagnosis.source import Source

    source = Source.of("class Model:\n    def __init__(self, n):\n        self.n = n\n")
    assert source is not None and {"Model", "n", "self"} <= source.bound_names()
