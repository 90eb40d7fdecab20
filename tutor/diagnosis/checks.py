"""Checks that reason over evidence: what the instrumented re-run saw, joined with the source's
data flow. Each check proposes candidate root causes (the line that causes the problem, which
may differ from the failing line), the chain of evidence that leads there, and concrete fixes
to try. Each ``*_checks`` module lists its own checks (:data:`CHECK_MODULES`); this module
runs them. The list comes from the real programs of the diagnosis corpora.
"""

from __future__ import annotations

import ast
import re

from tutor.diagnosis import (
    absent_param_checks,
    accounting_checks,
    accumulation_checks,
    adam_eps_checks,
    alias_checks,
    amp_checks,
    argument_checks,
    batch_checks,
    checkpoint_checks,
    clip_checks,
    closure_checks,
    config_checks,
    construction_checks,
    copy_checks,
    data_checks,
    definition_checks,
    discarded_checks,
    distribution_checks,
    double_step_checks,
    flag_checks,
    frequent_checks,
    grad_read_checks,
    gradcheck_checks,
    graph_checks,
    hook_checks,
    idle_checks,
    index_value_checks,
    iterator_checks,
    kind_checks,
    last_batch_checks,
    layer_size_checks,
    leaf_loss_checks,
    loop_return_checks,
    loss_shape_checks,
    memory_checks,
    message_checks,
    moved_leaf_checks,
    norm_rank_checks,
    operand_checks,
    optimizer_checks,
    optimizer_type_checks,
    output_checks,
    override_checks,
    padding_checks,
    param_list_checks,
    param_loop_checks,
    passed_on_checks,
    plateau_checks,
    precision_checks,
    program_checks,
    remedy_checks,
    reorder_checks,
    schedule_checks,
    shape_checks,
    size_checks,
    term_checks,
    trace_checks,
    training_checks,
    unbound_checks,
    view_checks,
    weighting_checks,
    wrapper_checks,
)
from tutor.diagnosis.candidate import Candidate, Check, Ctx
from tutor.diagnosis.fixes import Fix
from tutor.diagnosis.flow import Flow
from tutor.i18n import T

__all__ = ["Candidate", "Ctx", "candidates", "counts_late", "counts_whole_run"]

DEBUG = False  # tests of the checks set it, so a check's own bug is not hidden

CHECK_MODULES = (graph_checks, operand_checks, program_checks, argument_checks, shape_checks,
                 size_checks, trace_checks, training_checks, output_checks, data_checks,
                 clip_checks, accounting_checks, alias_checks, leaf_loss_checks,
                 discarded_checks, moved_leaf_checks, gradcheck_checks, kind_checks,
                 definition_checks, remedy_checks, idle_checks, schedule_checks,
                 memory_checks, override_checks, iterator_checks, batch_checks,
                 distribution_checks, precision_checks, checkpoint_checks,
                 accumulation_checks, weighting_checks, optimizer_checks, message_checks,
                 frequent_checks, param_loop_checks, reorder_checks, term_checks,
                 index_value_checks, copy_checks, loss_shape_checks, flag_checks,
                 grad_read_checks, hook_checks, double_step_checks, construction_checks,
                 amp_checks, wrapper_checks, layer_size_checks, view_checks,
                 closure_checks, plateau_checks, padding_checks,
                 param_list_checks, adam_eps_checks, optimizer_type_checks,
                 norm_rank_checks, unbound_checks, last_batch_checks, passed_on_checks,
                 config_checks, absent_param_checks, loop_return_checks)
"""Where the checks live; each lists its own (:data:`tutor.diagnosis.candidate.Check`). The
exceptions' first (the graph, then what an op was given), the silent bugs' read off the
training trace first: the order ties are ranked in."""
EXCEPTION_CHECKS = [check for module in CHECK_MODULES for check in module.EXCEPTION_CHECKS]
SILENT_CHECKS = [check for module in CHECK_MODULES for check in module.SILENT_CHECKS]


WHOLE_RUN_CHECKS = [trace_checks.check_trained_in_eval, trace_checks.check_functional_dropout,
                    accounting_checks.check_built_in_forward, alias_checks.check_self_copy,
                    alias_checks.check_update_from_itself, alias_checks.check_aliased_networks,
                    schedule_checks.check_horizon_in_batches]
"""Silent-bug checks whose words count events over the whole run (a module's calls in eval
mode, the copies "in this run"): where a budget cut the re-run's training and one of them
finds a candidate, the re-run and the trials are whole (:func:`counts_whole_run`). The other
checks read what the recording keeps of a training (:data:`tutor.diagnosis.fixes.SERIES`)."""


EVENT_CALLS = frozenset({"eval", "train", "load_state_dict", "copy_"})
"""Calls that make the events :data:`WHOLE_RUN_CHECKS` count: a mode switched, weights
copied."""


def counts_late(flow: Flow) -> bool:
    """Whether the program makes one of those events only on a condition (``if step % 500 ==
    499: target.load_state_dict(...)``), itself or through its own functions (``if step %
    eval_every == 0: evaluate(model)`` where ``evaluate`` calls ``model.eval()``): the first
    one may come after a budget's passes, so a silent bug's re-run of it is whole from the
    start."""
    def makes_event(call: ast.AST) -> bool:
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr in EVENT_CALLS
    graph = flow.call_graph
    # the learner's functions that make an event, directly or through another of them
    making = [fn for fn in graph.functions if any(makes_event(n) for n in ast.walk(fn))]
    calls: set[ast.AST] = set()
    while making:
        fn = making.pop()
        for call in graph.calls_of(fn):
            if call not in calls:
                calls.add(call)
                holder = graph.function_of(call)
                if holder is not None:
                    making.append(holder)
    return any(isinstance(branch, ast.If) and any(
        makes_event(node) or node in calls for node in ast.walk(branch))
        for branch in ast.walk(flow.tree))


def candidates(ctx: Ctx) -> list[Candidate]:
    checks = EXCEPTION_CHECKS if ctx.error is not None else SILENT_CHECKS
    found = [cand for check in checks for cand in _found(check, ctx)]
    return found if ctx.error is not None else found + together(found)


MOST_SITES = 4
"""Sites of one mistake changed together at most (a program with more is another story)."""
SITE_EDITS = frozenset({"replace", "insert_before", "insert_after", "delete"})
"""The edits several sites' changes can be made of together."""


def together(found: list[Candidate]) -> list[Candidate]:
    """One mistake made at several places (two functional dropouts left on, two lists of
    layers): each site's change alone leaves the symptom the trial looks for, so each is
    refused and nothing is said. A candidate more, for each such mistake, changes every site
    at once (their first fixes, where no two touch the same line); a site whose own change is
    enough still ranks first."""
    sites: dict[str, list[Candidate]] = {}
    for cand in found:
        if cand.fixes:
            sites.setdefault(cand.id, []).append(cand)
    out: list[Candidate] = []
    for cid, group in sites.items():
        if not 2 <= len(group) <= MOST_SITES or len({c.root_line for c in group}) < len(group):
            continue
        fixes = [c.fixes[0] for c in group]
        lines = [line for f in fixes for e in f.edits for line in (e.line, e.to) if line]
        # edits of distinct lines made bottom-up keep each other's line numbers; a move
        # shifts the lines between its two ends, which another site may be among
        if len(set(lines)) != len(lines) or any(e.kind not in SITE_EDITS
                                                for f in fixes for e in f.edits):
            continue
        first = min(group, key=lambda c: c.root_line)
        describe = T("; ".join(f.describe.en for f in fixes),
                     "；".join(f.describe.zh for f in fixes))
        fix = Fix(tuple(e for f in fixes for e in f.edits), first.fixes[0].expect, describe,
                  first.fixes[0].keeps)
        out.append(Candidate(cid, first.root_line, max(c.confidence for c in group) - 0.01,
                             [step for c in group for step in c.steps[:1]], [fix],
                             dict(first.fill)))
    return out


def counts_whole_run(ctx: Ctx) -> bool:
    """Whether a check that counts the whole run's events finds a candidate here."""
    return ctx.error is None and any(_found(check, ctx) for check in WHOLE_RUN_CHECKS)


def _found(check: Check, ctx: Ctx) -> list[Candidate]:
    try:
        return check(ctx)
    except (ValueError, IndexError, KeyError, AttributeError, TypeError, re.error):
        if DEBUG:
            raise
        return []  # a check that cannot read this program gives no candidate
