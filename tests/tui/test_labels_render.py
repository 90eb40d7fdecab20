"""The TUI's words and what the panes show, as data (no screen)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tutor.diagnosis.models import Diagnosis
from tutor.grading.models import CheckResult, Verdict
from tutor.i18n import T
from tutor.learning import Attempt, GraphView
from tutor.sandbox.models import (
    ErrorInfo,
    FrameInfo,
    Graph,
    GraphNode,
    ProbeResult,
    RunResult,
    TensorSnapshot,
    ValueSnapshot,
)
from tutor.tui.keys import KEYS, bindings, help_rows, keyed
from tutor.tui.labels import labels
from tutor.tui.render import (
    diagnosis_markdown,
    fit_bits,
    graph_items,
    graph_message,
    hints_markdown,
    outcome_line,
    output_plain,
    verdict_markdown,
)

TUI = Path(__file__).resolve().parents[2] / "tutor" / "tui"


def test_labels_are_yaml_and_json_alike_and_complete() -> None:
    source = (TUI / "labels.yaml").read_text(encoding="utf-8")
    as_yaml = YAML(typ="safe").load(source)
    table = labels()
    assert set(as_yaml) == set(table)
    for key, text in table.items():
        assert text.en.strip() and text.zh.strip(), key
        assert as_yaml[key] == {"en": text.en, "zh": text.zh}
        # the same placeholders in both languages
        assert set(re.findall(r"{(\w+)}", text.en)) == set(re.findall(r"{(\w+)}", text.zh)), key


def test_every_label_used_in_the_code_exists() -> None:
    used: set[str] = set()
    for path in TUI.glob("*.py"):
        code = path.read_text(encoding="utf-8")
        used |= set(re.findall(r"""label\(\s*["']([a-z_]+)["']""", code))
        used |= set(re.findall(r"""label\(f["']([a-z_]+)\{""", code))  # prefixes
    used |= {key.description for key in KEYS} | {key.help for key in KEYS if key.help}
    table = labels()
    plain = {key for key in used if not key.endswith("_")}
    assert plain <= set(table), plain - set(table)
    for prefix in used - plain:
        assert any(key.startswith(prefix) for key in table), prefix


def test_key_table_bindings_follow_the_language() -> None:
    described = {b.action: b.description for b in bindings()}
    assert described[keyed("en", "run")] == "Run" and described[keyed("zh", "run")] == "运行"
    footer = [b for b in bindings() if b.show and b.action.startswith("keyed('en',")]
    assert 5 <= len(footer) <= 8
    assert all(b.priority for b in bindings())
    assert ("ctrl+r / f5", "Run") in help_rows("en")


def _run(**kw) -> RunResult:
    return RunResult(device="cpu", **kw)


def test_outcome_lines_name_timeouts_crashes_and_cancels() -> None:
    assert "timed out" in outcome_line(_run(outcome="timeout"), "en")
    cancelled = _run(outcome="timeout", error=ErrorInfo(type="Cancelled", message=""))
    assert "cancelled" in outcome_line(cancelled, "en")
    assert "信号 11" in outcome_line(_run(outcome="crashed", signal=11), "zh")
    assert "memory" in outcome_line(_run(outcome="memory"), "en")
    assert "status 3" in outcome_line(_run(outcome="exited", exit_code=3), "en")
    error = ErrorInfo(type="RuntimeError", message="boom", line=4)
    line = outcome_line(_run(outcome="error", error=error), "en")
    assert line == "✗ raised RuntimeError on line 4"


def test_output_text_keeps_learner_text_verbatim() -> None:
    result = _run(outcome="ok", stdout="[bold]not markup[/bold]\n", stderr="warn\n")
    plain = output_plain(result, "en")
    assert "[bold]not markup[/bold]" in plain and "warn" in plain
    assert output_plain(None, "en") == ""


def test_verdict_and_diagnosis_markdown() -> None:
    check = CheckResult(
        name="value:x.grad",
        label=T("x.grad", "x.grad"),
        status="fail",
        points=0,
        max_points=2,
        message=T("differs", "不同"),
        output="got: 1\nexpected: 2",
    )
    verdict = Verdict(step="a/b", status="fail", score=1, max_score=3, checks=[check])
    attempt = Attempt("a/b", verdict)
    text = verdict_markdown(attempt, "zh")
    assert "尚未通过" in text and "得分 1/3" in text and "✗ **x.grad**（0/2）— 不同" in text
    assert "expected: 2" in text
    assert "No verdict yet" in verdict_markdown(None, "en")
    assert "not counted" in verdict_markdown(Attempt("a/b", verdict, cancelled=True), "en")
    assert "No known error or pitfall found in this run" in diagnosis_markdown(attempt, "en")
    diagnosis = Diagnosis(
        id="x",
        severity="pitfall",
        title=T("Title", "标题"),
        explanation=T("Why", "原因"),
        fix=T("Fix it", "修复"),
        line=3,
        lesson_ref="backward/first",
    )
    text = diagnosis_markdown(Attempt("a/b", verdict, [diagnosis]), "zh")
    assert "**标题**" in text and "隐患 · 第 3 行" in text and "修复" in text
    assert "backward/first" in text


def test_graph_tree_handles_shared_nodes_and_cycles() -> None:
    graph = Graph(
        root=1,
        nodes=[
            GraphNode(id=1, name="AddBackward0", next=[2, 2]),
            GraphNode(id=2, name="MulBackward0", next=[3, 1]),  # 1: a cycle (never in torch)
            GraphNode(id=3, name="AccumulateGrad", leaf_shape=[2, 3], leaf_name="w"),
        ],
        truncated=True,
    )
    root = graph_items(graph, "en")
    assert root is not None and root.label == "AddBackward0"
    first, second = root.children[:2]
    assert first.label == "MulBackward0"
    assert first.children[0].label == "AccumulateGrad  leaf w (2, 3)"
    assert first.children[1].label.endswith("(shown above)")
    assert second.label.endswith("(shown above)") and not second.children
    assert root.children[-1].label.startswith("… graph cut")
    assert graph_items(Graph(root=None), "en") is None


def test_graph_messages() -> None:
    ran = _run(outcome="ok")
    assert "did not run" in graph_message(GraphView("y", ran, None), "en")
    failed = ProbeResult(expr="q", error=ErrorInfo(type="NameError", message="no q"))
    assert "no q" in graph_message(GraphView("q", ran, failed), "en")
    value = ProbeResult(expr="n", value=ValueSnapshot(type="int", repr="3", value=3))
    assert "not a tensor (int)" in graph_message(GraphView("n", ran, value), "en")
    leaf = TensorSnapshot(
        shape=[2], dtype="torch.float32", device="cpu", requires_grad=True, is_leaf=True, numel=2
    )
    probe = ProbeResult(expr="x", value=leaf, graph=Graph(root=None))
    assert "叶子" in graph_message(GraphView("x", ran, probe), "zh")


def test_inline_code_parts() -> None:
    from tutor.tui.render import inline_code_parts

    assert inline_code_parts("`x.detach()` cuts") == [("x.detach()", True), (" cuts", False)]
    assert inline_code_parts("a `b` c") == [("a ", False), ("b", True), (" c", False)]
    assert inline_code_parts("odd ` tick") == [("odd ` tick", False)]


def test_header_bits_break_between_bits_never_inside_one() -> None:
    bits = ["第 4/6 步", "编程练习", "✓ 已通过", "尝试：1 次"]
    one_line = " · ".join(bits)
    assert fit_bits(bits, 80) == one_line
    assert fit_bits(bits, 0) == one_line  # not laid out yet
    # Chinese characters take two cells: "✓ 已通过 · 尝试：1 次" is 21.
    assert fit_bits(bits, 21) == "第 4/6 步 · 编程练习\n✓ 已通过 · 尝试：1 次"
    assert fit_bits(bits, 19) == "第 4/6 步\n编程练习 · ✓ 已通过\n尝试：1 次"
    assert fit_bits(["a very long bit", "b"], 5) == "a very long bit\nb"  # wraps alone


def _stopped(outcome: str, kind: str) -> RunResult:
    """A run the sandbox stopped at a limit, with where it was (tests/sandbox/
    test_stopped_where.py shows a real one)."""
    frames = [FrameInfo(line=6, function="<module>", source="total = spin(1)"),
              FrameInfo(line=3, function="spin", source="n += 1")]
    return _run(outcome=outcome, error=ErrorInfo(
        type=kind, message="stopped", line=3, source_line="n += 1", traceback=frames))


def _attempt_of(result: RunResult) -> Attempt:
    verdict = Verdict(step="l/s", status="error", score=0.0, max_score=1.0, run=result,
                      checks=[], message=T("", ""))
    return Attempt(step_ref="l/s", verdict=verdict)


@pytest.mark.parametrize(("outcome", "kind"), [("timeout", "Timeout"),
                                               ("memory", "MemoryError"),
                                               ("output_limit", "OutputLimit"),
                                               ("timeout", "Cancelled")])
def test_a_run_stopped_at_a_limit_says_its_line(outcome: str, kind: str) -> None:
    """Issue 22 #9: the sandbox says where a timed-out or out-of-memory run was; the Output
    and Verdict tabs left it out."""
    result = _stopped(outcome, kind)
    assert "line 3" in outcome_line(result, "en")
    assert "第 3 行" in outcome_line(result, "zh")
    plain = output_plain(result, "en")
    assert "line 6, in <module>\n    total = spin(1)" in plain
    assert "line 3, in spin\n    n += 1" in plain
    assert "终止时" in output_plain(result, "zh")  # the frames' title, translated
    assert "第 3 行，位于 spin\n    n += 1" in output_plain(result, "zh")
    assert "第 3 行" in verdict_markdown(_attempt_of(result), "zh")
    assert "line" not in outcome_line(_run(outcome=outcome, error=ErrorInfo(
        type=kind, message="stopped")), "en")  # no line said: none made up


def test_no_space_after_a_bold_chinese_label() -> None:
    """Issue 22 #5 (stray spaces): the Diagnosis tab read "如何修复： 检查这一行…": the
    space kept the label bold (CommonMark closes ``**`` after "：" only before a space)."""
    from rich.console import Console
    from rich.markdown import Markdown

    diagnosis = Diagnosis(id="x", severity="error", title=T("T", "标题"),
                          explanation=T("Why", "原因"), fix=T("Check it", "检查这一行"))
    verdict = Verdict(step="a/b", status="fail", score=0, max_score=1, checks=[])
    for lang, shown in (("zh", "如何修复：检查这一行"), ("en", "How to fix: Check it")):
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(Markdown(diagnosis_markdown(Attempt("a/b", verdict, [diagnosis]), lang)))
        plain = console.export_text()
        assert shown in plain and "**" not in plain, plain
    hints = hints_markdown(["先由 x 算出 y"], 2, "zh")
    assert hints == "**提示 1/2** 先由 x 算出 y"  # no punctuation: the space stays
