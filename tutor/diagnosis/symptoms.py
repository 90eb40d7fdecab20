"""What the fixed run of a silent bug must show for its fix to count: the symptom the training
trace saw is gone from the trace of the fixed program (the nan, the probabilities fed to a
loss that wants scores, the dropout on at prediction, the units that stay identical, the
gradients erased between passes, the parameters that do not move). Each takes (the original
instrumented run, the run of the fixed program), like :mod:`tutor.diagnosis.verify`, and
says what the change showed, or None; a change that only makes the program run is not enough.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tutor.diagnosis.fixes import Early, Expect, losses
from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence, LossInputEvidence, RunResult, TrainingEvidence

Check = Callable[[Evidence, Evidence], Text | None]


def traced(check: Check) -> Expect:
    """An expectation on the traces of both runs, once the fixed one ran to the end."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        if fixed.outcome != "ok" or fixed.evidence is None or original.evidence is None:
            return None
        return check(original.evidence, fixed.evidence)
    return expect


def finite(ev: Evidence) -> bool:
    """Nothing went nan/inf: no loss, no gradient at a step, no op of the trace."""
    return not ev.training.nonfinite and not any(isinstance(b.loss, str) for b in ev.backwards) \
        and not any(s.grads_nonfinite for s in ev.steps)


def _finite(original: Evidence, fixed: Evidence) -> Text | None:
    if not finite(fixed) or not fixed.backwards:
        return None
    values = [b.loss for b in fixed.backwards if isinstance(b.loss, float)]
    if len(values) >= 2:
        return T(f"with this change the loss stays finite (from {values[0]:.4g} to "
                 f"{values[-1]:.4g}) and no gradient is nan or inf",
                 f"改动后损失保持有限（从 {values[0]:.4g} 到 {values[-1]:.4g}），"
                 "梯度中也不再有 nan 或 inf")
    return T("with this change the loss and every gradient are finite",
             "改动后损失与所有梯度都是有限值")


nonfinite_gone = traced(_finite)


def _flagged(given: LossInputEvidence) -> bool:
    """A loss given what it does not expect: probabilities where it wants scores (or
    log-probabilities), or scores where it wants log-probabilities."""
    probabilities = given.producer in ("softmax", "_softmax", "sigmoid", "sigmoid_")
    if given.loss in ("nll_loss", "kl_div"):
        return given.log_probs is False and given.producer not in ("log_softmax",
                                                                   "_log_softmax")
    return probabilities


def loss_input_fixed(loss: str) -> Expect:
    """Fewer calls of ``loss`` in the fixed program are given what they do not expect (told
    by the loss op, not the line: a fix that removes a line moves the ones below it; a
    program may call the loss again elsewhere, to print it)."""
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        after = [g for g in fixed.training.loss_inputs if g.loss == loss]
        wrong = sum(1 for g in original.training.loss_inputs if g.loss == loss and _flagged(g))
        if not fixed.training.loss_inputs or sum(1 for g in after if _flagged(g)) >= wrong:
            return None  # (a fix may change the loss itself: NLLLoss to CrossEntropyLoss)
        return T("with this change the loss is given what it expects",
                 "改动后损失得到了它需要的输入")
    return traced(check)


def loss_input_fixed_and_learns(loss: str) -> Expect:
    """The loss gets what it expects; where that trained the model further, it says so."""
    given = loss_input_fixed(loss)

    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        shown = given(original, fixed)
        before, after = losses(original), losses(fixed)
        if shown is None or len(after) < 2 or len(before) < 2 or not (
                after[-1] < before[-1] * 0.9 and after[-1] < after[0]):
            return shown
        return T(f"{shown.en}; the loss now falls from {after[0]:.4g} to {after[-1]:.4g} "
                 f"(before the change it ended at {before[-1]:.4g})",
                 f"{shown.zh}；损失现在从 {after[0]:.4g} 降到 {after[-1]:.4g}"
                 f"（改动前最后是 {before[-1]:.4g}）")
    return expect


def gone(finding: Callable[[TrainingEvidence], Sequence[object]], shows: Text) -> Expect:
    """The fixed program's training trace has none of ``finding`` left: the change shows
    ``shows``."""
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        return None if finding(fixed.training) else shows
    return traced(check)


dropout_follows_mode = gone(lambda trace: trace.dropouts, T(
    "with this change the dropout is off when the model is in eval mode",
    "改动后模型处于 eval 模式时 dropout 是关闭的"))


one_sample_gone = gone(
    lambda trace: [g for g in trace.loss_inputs if g.one_sample and g.target_binary],
    T("with this change each output is compared with its own label",
      "改动后每个输出都和它自己的标签比较"))


def _steps_capped(original: Evidence, fixed: Evidence) -> Text | None:
    """Every step of the fixed run still moves the parameters, by clearly less than the same
    step did before: the clip now acts on the gradients the step applies."""
    pairs = list(zip(original.steps, fixed.steps, strict=False))
    if not pairs or any(a.moved is None or b.moved is None or not 0 < b.moved <= 0.9 * a.moved
                        for a, b in pairs):
        return None
    return T(f"with this change every step moves the parameters less ({pairs[0][1].moved:.3g} "
             f"instead of {pairs[0][0].moved:.3g} at the first): the clip now limits what the "
             "step applies",
             f"改动后每一步参数的变化都更小（第一步 {pairs[0][1].moved:.3g}，原来是 "
             f"{pairs[0][0].moved:.3g}）：裁剪现在限制了 step 用到的梯度")


steps_capped = traced(_steps_capped)


batch_softmax_gone = Early(gone(
    lambda trace: trace.batch_softmaxes,
    T("with this change each sample's probabilities are its own: the softmax compares its "
      "classes", "改动后每个样本的概率只属于它自己：softmax 比较的是它的各个类别")))


squashed_once = gone(
    lambda trace: [g for g in trace.loss_inputs if g.squashed_before],
    T("with this change the activation is applied once: the loss gets its full range",
      "改动后激活函数只作用一次：损失拿到的是完整的取值范围"))


square_gone = gone(
    lambda trace: trace.crossed,
    T("with this change no element-wise op pairs every element with every other",
      "改动后不再有逐元素运算把每个元素和所有元素两两配对"))


def _trained_in_train_mode(original: Evidence, fixed: Evidence) -> Text | None:
    trained = [m for m in fixed.modules if m.backward and (m.dropout or m.batchnorm)]
    if not trained or any(not m.training for m in trained):
        return None
    return T("with this change every forward pass that is trained on runs in training mode",
             "改动后每次用于训练的前向计算都在训练模式下进行")


trains_in_train_mode = traced(_trained_in_train_mode)


norms_apart = Early(gone(lambda trace: trace.shared_norms, T(
    "with this change each normalization layer sees one stage of the network",
    "改动后每个归一化层只处理网络中的一个阶段")))


input_kept = gone(lambda trace: trace.changed_inputs, T(
    "with this change the layer leaves its input as it was, so the later line reads the "
    "original values", "改动后该层不再改动它的输入，后面的代码读到的是原来的值"))


def accumulates() -> Expect:
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        steps = [s for s in fixed.steps if s.passes >= 2]
        before = [s for s in original.steps if s.passes >= 2]
        # a step whose gradients were all cleared just before it (zero_grad moved above its
        # step) used nothing: accumulating into a cleared .grad is no fix
        if not steps or any(s.cleared for s in steps) or any(
                s.n_params and s.grads_none + s.grads_zero >= s.n_params for s in fixed.steps):
            return None
        passes = steps[0].passes
        return T(f"with this change each step uses the gradients of all {passes} backward() "
                 f"passes (before the change only the last one's{_count(before)})",
                 f"改动后每次 step() 使用全部 {passes} 次 backward() 的梯度"
                 "（改动前只用最后一次的）")
    return traced(check)


def _count(steps: Sequence[object]) -> str:
    return f", at each of {len(steps)} steps" if len(steps) > 1 else ""


def moves_more(factor: float) -> Expect:
    """The parameters move by a sizeable fraction of themselves per step, and the loss falls
    by more than it did."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        after = losses(fixed)
        before = losses(original)
        if fixed.outcome != "ok" or ev is None or len(after) < 2 or not finite(ev):
            return None
        drop = (after[0] - after[-1]) / abs(after[0]) if after[0] else 0.0
        old = (before[0] - before[-1]) / abs(before[0]) if len(before) >= 2 and before[0] else 0.0
        if drop < 0.1 or drop < old + 0.05:
            return None
        return T(f"with this change the loss falls from {after[0]:.4g} to {after[-1]:.4g} "
                 f"(before the change: {before[0]:.4g} to {before[-1]:.4g})",
                 f"改动后损失从 {after[0]:.4g} 降到 {after[-1]:.4g}"
                 f"（改动前：{before[0]:.4g} 到 {before[-1]:.4g}）") if len(before) >= 2 else T(
            f"with this change the loss falls from {after[0]:.4g} to {after[-1]:.4g}",
            f"改动后损失从 {after[0]:.4g} 降到 {after[-1]:.4g}")
    return expect


def stays_frozen(names: list[str]) -> Expect:
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        held = [p for p in fixed.params if p.name in names]
        if not held or any(p.changed or p.requires_grad for p in held):
            return None
        if not any(p.changed for p in fixed.params if p.name not in names):
            return None  # nothing trains at all: not what a freeze is for
        shown = ", ".join(f"`{n}`" for n in names[:3])
        stays = "stays" if len(names[:3]) == 1 else "stay"
        return T(f"with this change {shown} {stays} frozen while the rest trains",
                 f"改动后 {shown} 保持冻结，其余参数照常训练")
    return traced(check)


def units_differ(name: str) -> Expect:
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        param = next((p for p in fixed.params if p.name == name), None)
        if param is None or param.rows_same_end is not False:
            return None
        return T(f"with this change the units of `{name}` start different and learn "
                 "different weights", f"改动后 `{name}` 的各个单元初始值不同，学到的权重也不同")
    return Early(traced(check))  # rows that start different never become the same


def learns(name: str) -> Expect:
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        param = next((p for p in fixed.params if p.name == name), None)
        if param is None or not param.changed or not param.in_optimizer:
            return None
        return T(f"with this change `{name}` is a parameter the optimizer updates",
                 f"改动后 `{name}` 是优化器会更新的参数")
    return traced(check)


def _parameters_move(original: Evidence, fixed: Evidence) -> Text | None:
    """The optimizer's steps now find gradients and change the parameters they hold."""
    held = [p for p in fixed.params if p.in_optimizer and p.requires_grad]
    if not fixed.steps or any(s.grads_none == s.n_params for s in fixed.steps) or not held \
            or not all(p.changed for p in held):
        return None
    moved = max((s.moved for s in fixed.steps if s.moved is not None), default=None)
    if moved is None or moved <= 0:
        return None
    return T(f"with this change every step finds gradients and the {len(held)} parameters "
             "the optimizer holds change", f"改动后每次 step() 都有梯度，优化器持有的 "
             f"{len(held)} 个参数都在改变")


parameters_move = traced(_parameters_move)


def _softmax_spreads(original: Evidence, fixed: Evidence) -> Text | None:
    if fixed.training.flat_softmaxes:
        return None
    return T("with this change the softmax compares the entries and its weights differ",
             "改动后 softmax 会比较这些元素，得到的权重各不相同")


softmax_spreads = Early(traced(_softmax_spreads))


def _one_score(original: Evidence, fixed: Evidence) -> Text | None:
    if fixed.training.flat_softmaxes:
        return None
    return T("with this change each sample's score becomes a probability between 0 and 1 that "
             "depends on its input",
             "改动后每个样本的分数变成一个取决于输入、介于 0 和 1 之间的概率")


one_score = Early(traced(_one_score))


def _registered_and_learns(original: Evidence, fixed: Evidence) -> Text | None:
    """No tensor the loss reaches is held outside what ``parameters()`` sees, the optimizer
    holds every one of them, and they change."""
    reached = [p for p in fixed.params if p.reached and p.requires_grad]
    if not fixed.steps or not reached or any(p.held_in or not p.in_optimizer for p in reached):
        return None
    if not any(p.changed for p in reached):
        return None
    return T(f"with this change the module registers them: the optimizer holds all "
             f"{len(reached)} tensors the loss reaches, and training changes them",
             f"改动后模块会登记它们：优化器持有损失用到的全部 {len(reached)} 个张量，"
             "训练也会改变它们")


registered_and_learns = traced(_registered_and_learns)


def _built_once(original: Evidence, fixed: Evidence) -> Text | None:
    if fixed.accounting.built_in_forward:
        return None
    if fixed.steps and any(p.reached and p.requires_grad and not p.in_optimizer
                           for p in fixed.params):
        return None
    if fixed.steps:
        return T("with this change the layers are built once, with the model, and the "
                 "optimizer holds and trains their parameters",
                 "改动后这些层只在创建模型时构建一次，优化器持有并训练它们的参数")
    return T("with this change the layers are built once, with the model: every call uses "
             "the same weights, and they are parameters of the model",
             "改动后这些层只在创建模型时构建一次：每次调用都使用同一组权重，它们也是模型的参数")


built_once = Early(traced(_built_once))


def flags_work(names: list[str]) -> Expect:
    """The parameters meant frozen no longer require grad and keep their values; where the
    program trains, the others still change."""
    def check(original: Evidence, fixed: Evidence) -> Text | None:
        held = [p for p in fixed.params if p.name in names]
        if not held or any(p.requires_grad or p.changed for p in held) or fixed.accounting \
                .module_flags:
            return None
        if fixed.steps and not any(p.changed for p in fixed.params if p.name not in names):
            return None
        shown = ", ".join(f"`{n}`" for n in names[:3])
        return T(f"with this change {shown} no longer require grad and keep their values"
                 + (" while the rest trains" if fixed.steps else ""),
                 f"改动后 {shown} 不再需要梯度，数值保持不变"
                 + ("，其余参数照常训练" if fixed.steps else ""))
    return traced(check)


def _networks_apart(original: Evidence, fixed: Evidence) -> Text | None:
    """No module object under two of the learner's names that an optimizer trains, and no
    tensor copied onto itself."""
    before = original.accounting
    after = fixed.accounting
    if after.self_copies or any(a.trained for a in after.aliases):
        return None
    if not (before.self_copies or any(a.trained for a in before.aliases)):
        return None
    return T("with this change the two names are two networks: copying the weights copies "
             "them from the trained one, and the optimizer's steps leave the copy as it was "
             "until the next copy",
             "改动后这两个名字是两个网络：复制权重时从训练的网络复制，优化器的每一步都不会改动副本，"
             "直到下一次复制")


networks_apart = traced(_networks_apart)


def _copies_from_trained(original: Evidence, fixed: Evidence) -> Text | None:
    if fixed.accounting.self_copies or not original.accounting.self_copies:
        return None
    return T("with this change each copy brings the trained network's weights into the copy "
             "(no tensor is copied onto itself any more)",
             "改动后每次复制都会把训练的网络的权重带进副本（不再有张量被复制到它自己）")


copies_from_trained = traced(_copies_from_trained)


def _every_pass_used(original: Evidence, fixed: Evidence) -> Text | None:
    """No backward() pass of the fixed run has its gradients cleared before a step."""
    if len(fixed.steps) < 2 or any(s.discarded for s in fixed.steps):
        return None
    passes = max(s.passes for s in fixed.steps)
    every = "both" if passes == 2 else f"all {passes}"
    return T(f"with this change each step uses the gradients of {every} backward() passes of "
             "its iteration", f"改动后每次 step() 都使用本轮全部 {passes} 次 backward() 的梯度")


every_pass_used = traced(_every_pass_used)
