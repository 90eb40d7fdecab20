"""A loss that is a sum of terms, one of which carries no graph although it was computed from
values that do: a derivative taken with ``autograd.grad`` without ``create_graph=True``, a
penalty turned into a number with ``.item()``, a term computed under ``no_grad`` or detached.
The term counts in the printed loss, but backward() gets no gradient from it, so the network
trains on the other terms alone and nothing fails.

The recorder's history of each backpropagated loss (:attr:`BackwardEvidence.chain`) follows
the loss back to the first op that cut a graph; a history that starts at the sum and goes on
through the term without a graph to such a cut is this mistake, whatever the term computes.
The changes tried are those that keep the graph through that cut
(:func:`tutor.diagnosis.cuts.cut_fixes`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.cuts import cut_fixes
from tutor.diagnosis.fixes import Expect
from tutor.diagnosis.flow import Flow, target_names
from tutor.i18n import T, Text
from tutor.sandbox.models import BackwardEvidence, ChainLink, Evidence, RunResult

SUMS = frozenset({"add", "sub", "rsub", "add_", "sub_"})
"""The ops that combine loss terms into the loss backpropagated."""


@dataclass(frozen=True)
class DeadTerm:
    backward: BackwardEvidence
    combined: ChainLink
    """The sum, the loss's own op."""
    term: ChainLink
    """The op that made the term without a graph."""
    cut: ChainLink
    """Where its graph was cut: an op given values that require grad, returning one that
    does not."""


def dead_terms(ev: Evidence) -> list[DeadTerm]:
    """The terms without a graph of the sums the run backpropagated, one per backward line."""
    found: dict[int, DeadTerm] = {}
    for backward in ev.backwards:
        chain = backward.chain
        if backward.line in found or len(chain) < 2 or not backward.requires_grad:
            continue
        combined, term = chain[0], chain[1]
        if combined.op not in SUMS or not combined.requires_grad or term.requires_grad:
            continue
        cut = next((link for link in chain[1:] if link.inputs_rg and not link.requires_grad),
                   None)
        if cut is None or cut.cut == "new":
            continue  # a constant added to the loss: nothing that had a graph lost it
        found[backward.line] = DeadTerm(backward, combined, term, cut)
    return list(found.values())


def number_terms(ev: Evidence, flow: Flow) -> list[DeadTerm]:
    """Terms turned into Python numbers (``l2 = penalty.item()``) and added to a sum the run
    backpropagated: the sum's history does not show a number, so the source says which name
    the cut assigned and the sum's statement that adds it."""
    found: list[DeadTerm] = []
    for op in ev.ops:
        if op.kind != "cut" or op.detail != "python" or not op.requires_grad:
            continue
        made = flow.statement_at(op.line)
        if not isinstance(made, ast.Assign):
            continue
        names = {n for t in made.targets for n in target_names(t)}
        for backward in ev.backwards:
            combined = backward.chain[0] if backward.chain else None
            if combined is None or combined.op not in SUMS or not backward.requires_grad:
                continue
            summed = flow.statement_at(combined.line)
            value = flow.value_of(summed) if summed is not None else None
            if value is None or summed is made or not any(
                    isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
                    and names & set(flow.names_in(node)) for node in ast.walk(value)):
                continue
            cut = ChainLink(line=op.line, op=op.op, requires_grad=False, inputs_rg=True,
                            cut="python")
            found.append(DeadTerm(backward, combined, cut, cut))
            break
    return found


def _trains_on_it(backward_line: int, term_line: int, cut_line: int) -> Expect:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        if fixed.outcome != "ok" or ev is None or not any(
                b.line == backward_line and b.requires_grad for b in ev.backwards) or any(
                d.backward.line == backward_line for d in dead_terms(ev)) or any(
                o.kind == "cut" and o.line == cut_line and o.detail == "python"
                and o.requires_grad for o in ev.ops):
            return None
        return T(f"with this change the term from line {term_line} keeps its graph, so the "
                 f"backward() on line {backward_line} gets gradients from it too, and the "
                 "program runs to the end",
                 f"改动后第 {term_line} 行的那一项保留了计算图，第 {backward_line} 行的 "
                 "backward() 也能从它得到梯度，程序也能运行到底")
    return expect


def check_term_without_gradient(ctx: Ctx) -> list[Candidate]:
    if ctx.error is not None:
        return []
    out = []
    seen = {d.backward.line for d in dead_terms(ctx.evidence)}
    found = dead_terms(ctx.evidence) + [d for d in number_terms(ctx.evidence, ctx.flow)
                                        if d.backward.line not in seen]
    for dead in found:
        cut, term, backward = dead.cut, dead.term, dead.backward
        if ctx.flow.statement_at(cut.line) is None:
            continue  # cut inside torch or a library, not in the learner's lines
        fill: dict[str, object] = {
            "line": cut.line, "term_line": term.line, "op": cut.op,
            "name": backward.name or "loss", "backward_line": backward.line,
            "sum_line": dead.combined.line}
        expect = _trains_on_it(backward.line, term.line, cut.line)
        fixes = cut_fixes(ctx, cut.line, cut.cut or "nondifferentiable", cut.op, expect)
        out.append(Candidate("loss-term-without-gradient", cut.line, 0.8,
                             [("term-without-graph", fill)], fixes, fill, pinned=True))
    return out[:2]


EXCEPTION_CHECKS: tuple[Check, ...] = ()
SILENT_CHECKS: tuple[Check, ...] = (check_term_without_gradient,)
