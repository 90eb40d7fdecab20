"""Checks that reason over evidence: what the instrumented re-run saw, joined with the source's
data flow. Each check proposes candidate root causes (the line that causes the problem, which
may differ from the failing line), the chain of evidence that leads there, and concrete fixes
to try. Exceptions: :mod:`graph_checks` (the graph) and :mod:`operand_checks` (what an op was
given); silent bugs: :mod:`training_checks`. The list comes from the real programs of the
diagnosis corpus.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from tutor.diagnosis.accounting_checks import (
    check_built_in_forward,
    check_flag_ignored,
    check_held_in_container,
)
from tutor.diagnosis.alias_checks import (
    check_aliased_networks,
    check_self_copy,
    check_update_from_itself,
)
from tutor.diagnosis.argument_checks import (
    check_dim_range,
    check_integer_mean,
    check_nonleaf_optimized,
    check_not_a_tensor,
    check_params_used_up,
    check_shadowed_callable,
    check_target_size,
)
from tutor.diagnosis.candidate import Candidate, Ctx
from tutor.diagnosis.clip_checks import check_clip_order
from tutor.diagnosis.data_checks import check_shuffled_apart
from tutor.diagnosis.discarded_checks import check_discarded_backward
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.graph_checks import (
    check_backward_twice,
    check_grad_none,
    check_inplace_saved,
    check_int_requires_grad,
    check_leaf_inplace,
    check_lost_graph,
    check_non_scalar,
    check_nonleaf_requires_grad,
    check_numpy,
)
from tutor.diagnosis.leaf_loss_checks import check_loss_rebuilt_as_leaf
from tutor.diagnosis.operand_checks import (
    check_batch,
    check_batchnorm_train,
    check_bool,
    check_ce_target,
    check_classes_last,
    check_conv_channels,
    check_dtype,
    check_embedding_indices,
    check_embedding_range,
    check_linear_shape,
    check_tuple_in_sequential,
    check_view_shape,
)
from tutor.diagnosis.output_checks import (
    check_output_range,
    check_target_cast,
    check_unnormalized_target,
)
from tutor.diagnosis.program_checks import (
    check_backward_number,
    check_bce_range,
    check_layers_in_list,
    check_module_init,
    check_module_with_tensors,
    check_result_discarded,
    check_tensor_from_tensors,
    check_view_contiguous,
)
from tutor.diagnosis.shape_checks import (
    check_batch_lost,
    check_missing_dim,
    check_sliced_one_side,
)
from tutor.diagnosis.size_checks import (
    check_output_element,
    check_parted,
    check_shapes_traced,
    check_size_at_creation,
)
from tutor.diagnosis.trace_checks import (
    check_changed_input,
    check_erased_accumulation,
    check_flat_softmax,
    check_freeze_undone,
    check_functional_dropout,
    check_loss_input,
    check_no_backward,
    check_no_step,
    check_nonfinite,
    check_shared_norm,
    check_symmetric_init,
    check_tiny_steps,
    check_trained_in_eval,
    check_unregistered,
    check_zero_gradient_op,
)
from tutor.diagnosis.training_checks import (
    check_broadcast,
    check_double_sigmoid,
    check_dropout_eval,
    check_frozen,
    check_graph_cut_silent,
    check_lr,
    check_optimizer_params,
    check_requires_grad_late,
    check_softmax_ce,
    check_uncalled,
    check_zero_grad,
)

__all__ = ["Candidate", "Ctx", "candidates", "counts_late", "counts_whole_run"]

DEBUG = False  # tests of the checks set it, so a check's own bug is not hidden

EXCEPTION_CHECKS = [check_backward_twice, check_lost_graph, check_inplace_saved,
                    check_leaf_inplace, check_non_scalar, check_numpy, check_linear_shape,
                    check_view_shape, check_batch, check_conv_channels, check_dtype,
                    check_ce_target, check_bool, check_grad_none, check_int_requires_grad,
                    check_nonleaf_requires_grad, check_batchnorm_train, check_module_init,
                    check_view_contiguous, check_backward_number, check_bce_range,
                    check_layers_in_list, check_embedding_indices, check_tensor_from_tensors,
                    check_embedding_range, check_module_with_tensors, check_classes_last,
                    check_tuple_in_sequential, check_not_a_tensor, check_shadowed_callable,
                    check_dim_range, check_integer_mean, check_nonleaf_optimized,
                    check_params_used_up, check_target_size, check_batch_lost,
                    check_sliced_one_side,
                    check_missing_dim, check_parted, check_output_element,
                    check_size_at_creation, check_shapes_traced, check_result_discarded]
TRACE_CHECKS = [check_nonfinite, check_loss_input, check_trained_in_eval,
                check_functional_dropout, check_shared_norm, check_changed_input,
                check_erased_accumulation, check_tiny_steps, check_freeze_undone,
                check_symmetric_init, check_unregistered, check_no_backward, check_no_step,
                check_zero_gradient_op, check_flat_softmax]
"""Silent bugs read off the training trace (tutor/diagnosis/trace_checks.py)."""
SILENT_CHECKS = [*TRACE_CHECKS, check_uncalled, check_zero_grad, check_optimizer_params,
                 check_requires_grad_late, check_graph_cut_silent, check_frozen, check_softmax_ce,
                 check_double_sigmoid, check_dropout_eval, check_lr, check_broadcast,
                 check_output_range, check_layers_in_list, check_shuffled_apart,
                 check_clip_order, check_held_in_container, check_built_in_forward,
                 check_flag_ignored, check_aliased_networks, check_self_copy,
                 check_target_cast, check_unnormalized_target, check_loss_rebuilt_as_leaf,
                 check_discarded_backward, check_update_from_itself]


WHOLE_RUN_CHECKS = [check_trained_in_eval, check_functional_dropout, check_built_in_forward,
                    check_self_copy, check_update_from_itself, check_aliased_networks]
"""Silent-bug checks whose words count events over the whole run (a module's calls in eval
mode, the copies "in this run"): where a budget cut the re-run's training and one of them
finds a candidate, the re-run and the trials are whole (:func:`counts_whole_run`). The other
checks read what the recording keeps of a training (:data:`tutor.diagnosis.fixes.SERIES`)."""


EVENT_CALLS = frozenset({"eval", "train", "load_state_dict", "copy_"})
"""Calls that make the events :data:`WHOLE_RUN_CHECKS` count: a mode switched, weights
copied."""


def counts_late(flow: Flow) -> bool:
    """Whether the program makes one of those events only on a condition (``if step % 500 ==
    499: target.load_state_dict(...)``): the first one may come after a budget's passes, so a
    silent bug's re-run of it is whole from the start."""
    return any(isinstance(branch, ast.If) and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        and call.func.attr in EVENT_CALLS for call in ast.walk(branch))
        for branch in ast.walk(flow.tree))


def candidates(ctx: Ctx) -> list[Candidate]:
    checks = EXCEPTION_CHECKS if ctx.error is not None else SILENT_CHECKS
    return [cand for check in checks for cand in _found(check, ctx)]


def counts_whole_run(ctx: Ctx) -> bool:
    """Whether a check that counts the whole run's events finds a candidate here."""
    return ctx.error is None and any(_found(check, ctx) for check in WHOLE_RUN_CHECKS)


def _found(check: Callable[[Ctx], list[Candidate]], ctx: Ctx) -> list[Candidate]:
    try:
        return check(ctx)
    except (ValueError, IndexError, KeyError, AttributeError, TypeError, re.error):
        if DEBUG:
            raise
        return []  # a check that cannot read this program gives no candidate
