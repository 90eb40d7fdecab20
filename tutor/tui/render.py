"""What the panes show, as plain data (markdown, rich text, trees): pure functions of the
session's models and the language, so they are tested without a screen and re-rendered
whole when the language changes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text as RichText

from tutor.cjk import PUNCTUATION
from tutor.course.models import (
    AnswerStep,
    CodeStep,
    FixStep,
    Lesson,
    QuizStep,
    ReadingStep,
    Step,
)
from tutor.i18n import Lang
from tutor.learning import Attempt, GraphView
from tutor.tui.labels import label

if TYPE_CHECKING:  # the sandbox's models load with the first run, not at start-up
    from tutor.diagnosis.models import Diagnosis
    from tutor.grading.models import Verdict
    from tutor.sandbox.models import ErrorInfo, Graph, RunResult


def step_markdown(lesson: Lesson, step: Step, lang: Lang) -> str:
    """The body of a step: its title and what to read or do."""
    parts = [f"**{step.title.get(lang)}**", ""]  # Rich centres headings: bold reads better
    if isinstance(step, ReadingStep):
        parts.append(step.body.get(lang))
    elif isinstance(step, (CodeStep, FixStep)):
        parts.append(step.prompt.get(lang))
    elif isinstance(step, QuizStep):
        # The choices in full here (markdown wraps); the selector below numbers them and
        # may cut long ones to one line.
        parts += [step.prompt.get(lang), ""]
        parts += [f"{i}. {choice.text.get(lang)}" for i, choice in enumerate(step.choices, 1)]
        parts += ["", f"*{label('quiz_pick_many' if step.multiple else 'quiz_pick_one', lang)}*"]
    elif isinstance(step, AnswerStep):
        parts.append(step.prompt.get(lang))  # the code itself is in the (read-only) editor
    return "\n".join(parts).rstrip() + "\n"


def fit_bits(bits: list[str], width: int, sep: str = " · ") -> str:
    """``bits`` joined by ``sep``, broken into lines of ``width`` cells between bits, never
    inside one ("尝试：1 次" is one bit; the wrap would break it between any two Chinese
    characters). A bit wider than the line wraps alone; ``width`` 0 (not laid out yet): one
    line."""
    lines: list[str] = []
    for bit in bits:
        joined = f"{lines[-1]}{sep}{bit}" if lines else bit
        if lines and (width <= 0 or cell_len(joined) <= width):
            lines[-1] = joined
        else:
            lines.append(bit)
    return "\n".join(lines)


def step_kind_label(step: Step, lang: Lang) -> str:
    return label(f"kind_{step.kind}", lang)


def answer_placeholder(step: AnswerStep, lang: Lang) -> str:
    """A hint of the answer's form (never its value): ``True or False`` for a flag, a node
    name for ``grad_fn``, a tensor for a gradient. The author's ``cross_check`` literal says
    which; without one the expression does."""
    expected, expr = step.cross_check, step.expr.replace(" ", "")
    if isinstance(expected, bool) or (
        expected is None and expr.endswith((".requires_grad", ".is_leaf", "isNone"))
    ):
        return label("answer_placeholder_bool", lang)
    if isinstance(expected, str) or (expected is None and expr.endswith(".name()")):
        if "grad_fn" in expr:
            example = "AddBackward0" if expected == "MulBackward0" else "MulBackward0"
            return label("answer_placeholder_node", lang, example=example)
        return label("answer_placeholder_text", lang)
    if isinstance(expected, int):
        return label("answer_placeholder_int", lang)
    if isinstance(expected, float):
        return label("answer_placeholder_number", lang)
    if isinstance(expected, list) and all(isinstance(v, int) for v in expected):
        return label("answer_placeholder_list", lang)  # a shape, a list of counts
    example = "tensor([2., 5.])" if expected == [1.0, 3.0] else "tensor([1., 3.])"
    return label("answer_placeholder", lang, example=example)


def inline_code_parts(text: str) -> list[tuple[str, bool]]:
    """Split text on markdown inline code: (segment, is_code) pairs, backticks dropped.
    For one-line labels (quiz choices) that are not drawn as markdown."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: show the text as it is
        return [(text, False)]
    return [(part, index % 2 == 1) for index, part in enumerate(parts) if part]


def bold_lead(lead: str, text: str) -> str:
    """``**lead** text``; a lead that ends in Chinese punctuation keeps that mark outside
    the bold and no space after it ("**如何修复**：检查"): CommonMark closes ``**`` after
    "：" only before a space, which read as a stray one."""
    if re.search(f"[{PUNCTUATION}]$", lead):
        return f"**{lead[:-1]}**{lead[-1]}{text}"
    return f"**{lead}** {text}"


def hints_markdown(hints: list[str], total: int, lang: Lang) -> str:
    return "\n\n".join(
        bold_lead(label("hint_n", lang, n=i + 1, total=total), hint)
        for i, hint in enumerate(hints)
    )


# --------------------------------------------------------------------------- output


STOPPED = {"timeout": "outcome_timeout", "memory": "outcome_memory",
           "output_limit": "outcome_output_limit"}
"""Outcomes of a run the sandbox stopped at a limit (its label key): it says where it was."""


def outcome_line(result: RunResult, lang: Lang) -> str:
    """One line saying how the run ended: timeouts, crashes and cancels named as such; a run
    stopped at a limit (or cancelled) with the line it was on, when the sandbox knows it."""
    error = result.error
    if result.outcome == "ok":
        return label("outcome_ok", lang, ms=f"{result.duration_ms:.0f}", device=result.device)
    if result.outcome in STOPPED:
        cancelled = error is not None and error.type == "Cancelled"
        key = "outcome_cancelled" if cancelled else STOPPED[result.outcome]
        if error is not None and error.line is not None:
            return label(f"{key}_at", lang, line=error.line)
        return label(key, lang)
    if result.outcome == "crashed":
        return label("outcome_crashed", lang, signal=result.signal if result.signal else "?")
    if result.outcome == "exited":
        return label("outcome_exited", lang, code=result.exit_code)
    error_type = error.type if error else "Exception"
    if error is not None and error.line is not None:
        return label("outcome_error", lang, type=error_type, line=error.line)
    return label("outcome_error_noline", lang, type=error_type)


def expected_error_line(result: RunResult, lang: Lang) -> str | None:
    """On a step that asks for the error, the run that raised it reads as the success it
    is: "✓ line 5 raised RuntimeError, as asked" (None when the run did not raise)."""
    error = result.error
    if result.outcome != "error" or error is None:
        return None
    if error.line is not None:
        return label("outcome_expected_error", lang, type=error.type, line=error.line)
    return label("outcome_expected_error_noline", lang, type=error.type)


def suggestion_line(result: RunResult, lang: Lang, code: str = "") -> str | None:
    """"Did you mean backward()?" for a mistyped tensor method or name (or None)."""
    from tutor.learning.did_you_mean import meant_in

    error = result.error
    if error is None or result.outcome != "error":
        return None
    meant = meant_in(error, code)
    return None if meant is None else label("did_you_mean", lang, name=meant)


def output_text(
    result: RunResult | None, lang: Lang, *, error_expected: bool = False, code: str = ""
) -> RichText:
    """The output pane: how it ended, stdout, stderr, warnings, the learner's traceback.
    ``error_expected``: the step asked for the error this run raised (it passed)."""
    if result is None:
        return RichText(label("no_output_yet", lang), style="italic dim")
    # Here, not at the top: the diagnosis package is not needed before the first run.
    from tutor.diagnosis.messages import for_learner

    text = RichText()
    expected = expected_error_line(result, lang) if error_expected else None
    if expected is not None:
        text.append(expected + "\n", style="bold green")
    else:
        style = "bold green" if result.ok else "bold red"
        text.append(outcome_line(result, lang) + "\n", style=style)
    if result.stdout:
        text.append(f"\n── {label('stdout_title', lang)} ──\n", style="dim")
        text.append(result.stdout.rstrip("\n") + "\n")
    if result.stderr:
        text.append(f"\n── {label('stderr_title', lang)} ──\n", style="dim")
        text.append(result.stderr.rstrip("\n") + "\n", style="yellow")
    if result.output_truncated:
        text.append(label("output_truncated", lang) + "\n", style="italic red")
    if result.warnings:
        text.append(f"\n── {label('warnings_title', lang)} ──\n", style="dim")
        for warning in result.warnings:
            where = f"{warning.line}: " if warning.line else ""
            message = for_learner(warning.message)
            text.append(f"{where}{warning.category}: {message}\n", style="yellow")
    error = result.error
    if error is not None and result.outcome in STOPPED and error.traceback:
        text.append(f"\n── {label('stopped_where_title', lang)} ──\n", style="dim")
        _frames(text, error, lang)
    if error is not None and result.outcome == "error":
        text.append(f"\n── {label('traceback_title', lang)} ──\n", style="dim")
        _frames(text, error, lang)
        text.append(f"{error.type}: {for_learner(error.message)}\n",
                    style="bold green" if expected else "bold red")
        suggestion = None if expected else suggestion_line(result, lang, code)
        if suggestion:
            text.append(suggestion + "\n", style="bold yellow")
    return text


def _frames(text: RichText, error: ErrorInfo, lang: Lang) -> None:
    """The learner's frames, as Python's traceback shows them (in the learner's words, as
    ``tutor run`` writes them)."""
    for frame in error.traceback:
        where = label("frame_line", lang, line=frame.line, function=frame.function)
        text.append(f"  {where}\n", style="dim")
        if frame.source:
            text.append(f"    {frame.source.strip()}\n")


def output_plain(result: RunResult | None, lang: Lang) -> str:
    """The output pane as plain text (for the clipboard)."""
    return "" if result is None else output_text(result, lang).plain


# --------------------------------------------------------------------------- verdict

_VERDICT_KEYS = {
    "pass": "verdict_pass",
    "fail": "verdict_fail",
    "error": "verdict_error",
    "not_gradable": "verdict_not_gradable",
}
_CHECK_MARKS = {"pass": "✓", "fail": "✗", "error": "!"}


def _points(value: float) -> str:
    return f"{value:g}"


def verdict_markdown(
    attempt: Attempt | None, lang: Lang, *, typed: str = "", code: str = ""
) -> str:
    """The verdict pane: overall status and score, then one line of feedback per check."""
    if attempt is None:
        return f"*{label('no_verdict_yet', lang)}*\n"
    if attempt.cancelled:
        return f"*{label('verdict_cancelled', lang)}*\n"
    verdict: Verdict = attempt.verdict
    score = label(
        "verdict_score", lang, score=_points(verdict.score), max=_points(verdict.max_score)
    )
    lines = [f"**{label(_VERDICT_KEYS[verdict.status], lang)} · {score}**", ""]
    if verdict.run is not None and not verdict.run.ok:
        expected = expected_error_line(verdict.run, lang) if verdict.passed else None
        lines += [f"*{expected or outcome_line(verdict.run, lang)}*", ""]
        suggestion = None if verdict.passed else suggestion_line(verdict.run, lang, code)
        if suggestion:
            lines += [f"**{suggestion}**", ""]
    if typed and not verdict.passed:
        from tutor.learning.did_you_mean import for_answer

        literal = for_answer(typed)
        if literal:
            lines += [f"**{label('did_you_mean', lang, name=literal)}**", ""]
    check_messages = {check.message.get(lang) for check in verdict.checks}
    if verdict.message is not None and verdict.message.get(lang) not in check_messages:
        lines += [verdict.message.get(lang), ""]  # (a summary that repeats a check is left out)
    for check in verdict.checks:
        mark = _CHECK_MARKS[check.status]
        pts = f"{_points(check.points)}/{_points(check.max_points)}"
        name, said = check.label.get(lang), check.message.get(lang)
        if lang == "zh":  # full-width brackets, no space after Chinese punctuation
            lines.append(f"- {mark} **{name}**（{pts}）— {said}")
        else:
            lines.append(f"- {mark} **{name}** ({pts}) — {said}")
        output = check.output_for(lang)  # got/expected in the learner's language
        if output:
            lines += ["", "  ```", *("  " + ln for ln in output.splitlines()), "  ```"]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- diagnosis


def diagnosis_markdown(attempt: Attempt | None, lang: Lang, *, code: str = "") -> str:
    """The diagnosis pane: each diagnosis with what happened, why, and the fix; first, for
    a mistyped name, the name that was most likely meant."""
    if attempt is None or attempt.cancelled:
        return f"*{label('no_diagnosis_yet', lang)}*\n"
    suggestion = None
    if attempt.run is not None and not attempt.verdict.passed:
        suggestion = suggestion_line(attempt.run, lang, code)
    if not attempt.diagnoses:
        if suggestion:
            return f"**{suggestion}**\n"
        if attempt.run_facts:  # a wrong answer no check explains: what its run shows
            facts = "\n".join(f"- {fact.get(lang)}" for fact in attempt.run_facts)
            return f"*{label('no_diagnosis', lang)}* {label('run_shows', lang)}\n\n{facts}\n"
        return f"*{label('no_diagnosis', lang)}*\n"
    blocks = [_diagnosis_block(d, lang) for d in attempt.diagnoses]
    if suggestion:
        blocks.insert(0, f"**{suggestion}**")
    return "\n\n---\n\n".join(blocks).rstrip() + "\n"


def _diagnosis_block(diagnosis: Diagnosis, lang: Lang) -> str:
    root = diagnosis.root_elsewhere
    where = f" · {label('diag_line_root', lang, line=diagnosis.line, root=root)}" if root else (
        f" · {label('diag_line', lang, line=diagnosis.line)}" if diagnosis.line else "")
    severity = label(f"severity_{diagnosis.severity}", lang)
    lines = [f"**{diagnosis.title.get(lang)}**", "", f"*{severity}{where}*", ""]
    lines += [diagnosis.explanation.get(lang), ""]
    if diagnosis.details is not None:
        lines += [diagnosis.details.get(lang), ""]
    from tutor.tui.root_cause import evidence_markdown  # root line, evidence, tried fix

    shown = evidence_markdown(diagnosis, lang)
    if shown:
        lines.append(shown)
    lines += [bold_lead(label("diag_fix", lang), diagnosis.fix.get(lang)), ""]
    if diagnosis.lesson_ref:
        lines.append(f"*{label('diag_see', lang, ref=diagnosis.lesson_ref)}*")
    return "\n".join(lines).rstrip()


# --------------------------------------------------------------------------- graph


@dataclass
class GraphItem:
    """One node of the drawn graph tree."""

    label: str
    children: list[GraphItem] = field(default_factory=list)


def _shape(shape: list[int] | None) -> str:
    """A shape the way torch prints a tuple: ``(2,)``, ``(2, 3)``."""
    if shape is None:
        return ""
    inner = ", ".join(str(n) for n in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def graph_items(graph: Graph, lang: Lang, *, max_depth: int = 40) -> GraphItem | None:
    """The graph as a tree rooted at the tensor's ``grad_fn``. A node reached twice is drawn
    once; later visits say so, which keeps shared subgraphs (and any cycle) finite."""
    if graph.root is None:
        return None
    nodes = {node.id: node for node in graph.nodes}
    seen: set[int] = set()

    def build(node_id: int, depth: int) -> GraphItem:
        node = nodes.get(node_id)
        if node is None:
            return GraphItem(f"? #{node_id}")
        text = node.name
        if node.name == "AccumulateGrad":
            name = node.leaf_name or "?"
            text += "  " + label("graph_leaf", lang, name=name, shape=_shape(node.leaf_shape))
        if node_id in seen:
            return GraphItem(f"{text}  {label('graph_seen', lang)}")
        seen.add(node_id)
        item = GraphItem(text)
        if depth < max_depth:
            item.children = [build(child, depth + 1) for child in node.next]
        return item

    root = build(graph.root, 0)
    if graph.truncated:
        root.children.append(GraphItem(label("graph_truncated", lang)))
    return root


def graph_message(view: GraphView, lang: Lang) -> str | None:
    """Why there is no tree to draw, or None when there is one."""
    probe = view.probe
    if probe is None:
        return label("graph_run_failed", lang)
    if probe.error is not None:
        return label("graph_failed", lang, expr=view.expr, error=probe.error.message)
    from tutor.sandbox.models import TensorSnapshot

    if not isinstance(probe.value, TensorSnapshot):
        kind = probe.value.type if probe.value is not None else "None"
        return label("graph_not_tensor", lang, expr=view.expr, type=kind)
    if probe.graph is None or probe.graph.root is None:
        return label("graph_no_root", lang, expr=view.expr)
    return None


def graph_root_label(view: GraphView) -> str:
    from tutor.sandbox.models import TensorSnapshot

    snapshot = view.probe.value if view.probe else None
    if isinstance(snapshot, TensorSnapshot):
        return f"{view.expr}  {_shape(snapshot.shape)}  grad_fn={snapshot.grad_fn}"
    return view.expr
