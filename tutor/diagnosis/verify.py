"""What a fixed run must show for a tried fix to count: the exception gone, the loss falling,
the parameters learning, the model predicting in eval mode. Each takes (the original
instrumented run, the run of the fixed program) and says what the change showed, or None.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re
from collections.abc import Callable

from tutor import syntax_tree
from tutor.diagnosis.fixes import Expect, losses
from tutor.diagnosis.intent import Intent
from tutor.i18n import T, Text
from tutor.sandbox.models import Evidence, RunResult, StepEvidence


def runs_clean(original: RunResult, fixed: RunResult) -> Text | None:
    if fixed.outcome != "ok":
        return None
    grads = _grad_summary(fixed)
    return T("with this change your program runs to the end" + (f"; {grads[0]}" if grads else ""),
             "改动后程序能完整运行" + (f"；{grads[1]}" if grads else ""))



def _grad_summary(result: RunResult) -> tuple[str, str] | None:
    ev = result.evidence
    if ev is None or not ev.params:
        return None
    shown = [p.name for p in ev.params if not p.grad_none]
    names = _named(shown)
    if names is None:
        return None
    return f"{names} now {agree(shown, 'gets', 'get')} a gradient", f"{names} 现在得到了梯度"


def _named(names: list[str]) -> str | None:
    """The first three names the re-run could give, as code; None when it gave none."""
    shown = [f"`{n}`" for n in _shown(names)]
    return ", ".join(shown) or None


def _shown(names: list[str]) -> list[str]:
    return [n for n in names if n and n != "?"][:3]


def agree(names: list[str], one: str, many: str) -> str:
    """The English verb that agrees with the names :func:`_named` shows (``gets`` for one,
    ``get`` for several)."""
    return one if len(_shown(names)) == 1 else many



def _drop(values: list[float]) -> float:
    return (values[0] - values[-1]) / abs(values[0]) if values and values[0] else 0.0



def loss_improves(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program's loss falls, and by more than it did before the change."""
    before, after = losses(original), losses(fixed)
    if fixed.outcome != "ok" or len(after) < 2:
        return None
    if not all(abs(v) < float("inf") for v in after) or any(
            isinstance(b.loss, str) for b in (fixed.evidence.backwards if fixed.evidence else [])):
        return None
    raw_before = [b.loss for b in original.evidence.backwards] if original.evidence else []
    # not a loss at all before: nan/inf, or negative where the fixed one never is (NLLLoss
    # of probabilities instead of log-probabilities)
    broken_before = any(isinstance(v, str) for v in raw_before) or (
        any(v < 0 for v in before) and all(v >= 0 for v in after))
    # a loss that was no loss before needs only to fall now (a short training moves a
    # proper loss less than 10%); one that was a loss must fall clearly more than it did
    if (broken_before and _drop(after) >= 0.03) or (_drop(after) >= 0.1 and (
            len(before) < 2 or _drop(after) > _drop(before) + 0.05)):
        return T(f"with this change the loss falls from {after[0]:.4g} to {after[-1]:.4g}"
                 + (f" (before the change: {before[0]:.4g} to {before[-1]:.4g})"
                    if len(before) >= 2 else ""),
                 f"改动后损失从 {after[0]:.4g} 降到 {after[-1]:.4g}"
                 + (f"（改动前：{before[0]:.4g} 到 {before[-1]:.4g}）" if len(before) >= 2 else ""))
    return None



def grads_fresh(original: RunResult, fixed: RunResult) -> Text | None:
    """Each backward() of the fixed program starts from cleared gradients, where the
    original's added to the previous ones."""
    before = _accumulating(original)
    after = _accumulating(fixed)
    if fixed.outcome != "ok" or not before or after or fixed.evidence is None or len(
            fixed.evidence.backwards) < 2:
        return None
    return T(f"with this change every backward() starts from cleared gradients (before the "
             f"change {before} passes added to the previous ones)",
             f"改动后每次 backward() 都从清零的梯度开始"
             f"（改动前有 {before} 次把梯度累加到之前的上面）")


def _accumulating(result: RunResult) -> int:
    ev = result.evidence
    return sum(1 for b in ev.backwards if b.accumulated) if ev is not None else 0


def finished(check: Callable[[Evidence], Text | None]) -> Expect:
    """An expectation on what the re-run of the fixed program saw, once it ran to the end."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        ev = fixed.evidence
        return check(ev) if fixed.outcome == "ok" and ev is not None else None
    return expect


def params_learn(names: list[str], most: bool = False) -> Expect:
    """Every one of ``names`` (every parameter for none) changes in the fixed run; with
    ``most``, more than half of them do (a layer's bias whose gradient is exactly zero, as
    a hinge loss's last bias has, stays put in a model that learns)."""
    def expect(ev: Evidence) -> Text | None:
        wanted = [p for p in ev.params if p.name in names] if names else ev.params
        learned = [p for p in wanted if p.requires_grad]
        moved = [p for p in learned if p.changed]
        if not wanted or len(moved) < (len(learned) // 2 + 1 if most else len(learned)):
            return None
        wanted = moved if most else wanted
        shown = _named([p.name for p in wanted])
        verb = agree([p.name for p in wanted], "is", "are")
        if shown is None:
            return T("with this change the parameters are updated by training",
                     "改动后参数会在训练中被更新")
        return T(f"with this change {shown} {verb} updated by training",
                 f"改动后 {shown} 会在训练中被更新")
    return finished(expect)



def same_loss(original: RunResult, fixed: RunResult) -> Text | None:
    """What the fixed run computes differently: the loss its first backward() is called on,
    against the one the original run's first backward() got (a change that only lets the
    gradient through computes the same values). None when they agree, or when the original
    recorded no finite loss to compare."""
    if original.evidence is None or fixed.evidence is None or not original.evidence.backwards \
            or not fixed.evidence.backwards:
        return None
    before, after = original.evidence.backwards[0].loss, fixed.evidence.backwards[0].loss
    if not isinstance(before, float) or not isinstance(after, float):
        return None
    if abs(after - before) <= 1e-4 * max(abs(before), abs(after)) + 1e-6:
        return None
    return T(f"with it the loss is {after:.4g} where your program computed {before:.4g}: the "
             "change computes something else, not the same values with their gradient",
             f"改动后损失是 {after:.4g}，而你的程序算出的是 {before:.4g}：这个改动算的是别的东西，"
             "而不是带上梯度的同样数值")



def params_reached(names: list[str]) -> Expect:
    """Where nothing is trained (a program that only computes gradients): backward() now
    reaches the parameters it missed, and gives them gradients."""
    def expect(ev: Evidence) -> Text | None:
        wanted = [p for p in ev.params if p.name in names]
        if not names or not wanted or not all(p.reached and not p.grad_none for p in wanted):
            return None
        shown = _named([p.name for p in wanted])
        return T(f"with this change backward() reaches {shown} and gives "
                 f"{agree(names, 'it', 'them')} gradients",
                 f"改动后 backward() 会到达 {shown}，并给出梯度")
    return finished(expect)


def backward_runs(original: RunResult, fixed: RunResult) -> Text | None:
    ev = fixed.evidence
    if fixed.outcome != "ok" or ev is None or not ev.backwards:
        return None
    names = [p.name for p in ev.params if not p.grad_none]
    shown = _named(names)
    if shown is None:
        return T("with this change backward() runs and the parameters get gradients",
                 "改动后 backward() 会执行，参数得到梯度")
    return T(f"with this change backward() runs and {shown} {agree(names, 'gets', 'get')} "
             "gradients",
             f"改动后 backward() 会执行，{shown} 得到梯度")



def eval_at_prediction(lines: set[int]) -> Expect:
    def expect(ev: Evidence) -> Text | None:
        calls = [m for m in ev.modules if m.dropout or m.batchnorm]
        late = [m for m in calls if not m.grad_enabled or not ev.backwards
                or (m.after_backward and not m.training)]
        if late and all(not m.training for m in late):
            return T("with this change the model predicts in eval mode (Dropout and "
                     "BatchNorm switched to inference)",
                     "改动后模型在 eval 模式下预测（Dropout 与 BatchNorm 处于推理状态）")
        return None
    return finished(expect)



def loss_falls_steadily(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program's loss stays finite and falls with few steps back up: a smaller
    step size that really settles it, not one that only slows a divergence down."""
    after = losses(fixed)
    raw = [b.loss for b in fixed.evidence.backwards] if fixed.evidence else []
    if fixed.outcome != "ok" or len(after) < 4 or len(after) != len(raw):
        return None
    blocks = _blocks(after)
    if blocks is not after:
        # per-sample losses, noisy: the trend of their block means falls and never climbs
        # above where it started (a divergence slowed down climbs)
        if sum(blocks[-3:]) / 3 > blocks[0] * 0.9 or max(blocks) > blocks[0] * 1.2:
            return None
        after = blocks
    else:
        ups = sum(1 for a, b in itertools.pairwise(after) if b > a)
        if after[-1] > after[0] * 0.9 or ups > (len(after) - 1) * 0.3:
            return None
    return T(f"with this change the loss falls steadily, from {after[0]:.4g} to {after[-1]:.4g}",
             f"改动后损失稳定下降，从 {after[0]:.4g} 降到 {after[-1]:.4g}")


def _blocks(values: list[float], count: int = 10) -> list[float]:
    """A long series of per-sample losses (one backward() per example) as the means of
    ``count`` consecutive blocks: its trend, without each sample's own noise."""
    if len(values) < 4 * count:
        return values
    size = len(values) // count
    return [sum(values[i:i + size]) / size for i in range(0, size * count, size)]


def all_of(*expects: Callable[[RunResult, RunResult], Text | None]
             ) -> Callable[[RunResult, RunResult], Text | None]:
    """Every expectation holds; what the first one says is shown."""
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        said = [e(original, fixed) for e in expects]
        return said[0] if all(s is not None for s in said) else None
    return expect


def both(*expects: Callable[[RunResult, RunResult], Text | None]
         ) -> Callable[[RunResult, RunResult], Text | None]:
    def expect(original: RunResult, fixed: RunResult) -> Text | None:
        for e in expects:
            got = e(original, fixed)
            if got is not None:
                return got
        return None
    return expect



def runs_clean_with_grad(name: str) -> Expect:
    def expect(ev: Evidence) -> Text | None:
        hit = next((p for p in ev.params if p.name == name), None)
        if hit is None or hit.grad_none:
            return None
        return T(f"with this change `{name}.grad` is computed",
                 f"改动后 `{name}.grad` 被计算出来")
    return finished(expect)



def cut_gone(line: int) -> Expect:
    def expect(ev: Evidence) -> Text | None:
        if any(o.kind == "cut" and o.line == line for o in ev.ops):
            return None
        return T(f"with this change the value computed on line {line} keeps its graph and "
                 "passes gradients back", f"改动后第 {line} 行算出的值保留计算图并回传梯度")
    return finished(expect)



def no_broadcast_warning(original: RunResult, fixed: RunResult) -> Text | None:
    if fixed.outcome != "ok":
        return None
    if any("different to the input size" in w.message for w in fixed.warnings):
        return None
    return T("with this change prediction and target have the same shape and the loss "
             "compares them element by element",
             "改动后预测与目标形状相同，损失逐元素比较它们")


_NUMBER = re.compile(r"\d")


def prints_else(original: RunResult, fixed: RunResult) -> Text | None:
    """The fixed program runs and prints something else than the learner's did: what they
    looked at changed (a silent bug's fix whose symptom is the program's own output)."""
    if fixed.outcome != "ok" or fixed.stdout.strip() == original.stdout.strip():
        return None
    return T("with this change your program runs to the end, and what it prints changes",
             "改动后程序能完整运行，打印的内容也变了")


def prints_the_same(original: RunResult, fixed: RunResult) -> bool:
    """A silent program's fix that leaves what it prints as it was: both runs went to the
    end, and the fixed one printed, number for number, what the learner saw, with the same
    warnings. What a program prints is what its author looked at; a change that alters none
    of it does not explain what they saw, whatever else it shows (a BatchNorm switched to
    eval mode in a program that printed a parameter count). Output without a number says
    nothing to compare."""
    if original.outcome != "ok" or fixed.outcome != "ok":
        return False
    if original.evidence is None or fixed.evidence is None:
        return False
    if original.evidence.cut is not None or fixed.evidence.cut is not None:
        return False  # a budget ended a run before it printed all it prints
    seen = original.stdout.strip()
    if not _NUMBER.search(seen) or fixed.stdout.strip() != seen:
        return False
    # a warning is seen too: a fix that silences the one the run gave changed what was seen
    return {w.message for w in fixed.warnings} == {w.message for w in original.warnings}


# -- what a fix must not do, whatever it makes go away --------------------------------------
def hides_bug(original: RunResult, fixed: RunResult, intent: Intent | None = None
              ) -> Text | None:
    """What the fixed run did that the program cannot have meant, when it did something of
    the kind the original run did not: a forward pass that overwrites a parameter (outside
    any optimizer step), a model trained on only in eval mode (BatchNorm, Dropout), a loss that
    broadcasts its prediction against the target, an
    optimizer stepped after backward() with a gradient for none of its parameters, an
    optimizer that stepped and no longer does (told apart from another of its name by the
    class that steps it), a parameter backward() still reaches whose gradient every step now
    finds cleared; and what
    breaks the program's intent (``intent``, read from its source): a parameter it trained
    that no longer gets a gradient or no longer moves, one it meant to freeze that now moves,
    fewer training steps than it took. A fix that only makes the error (or the symptom) go
    away this way hides the bug: it is refused, whatever it shows."""
    ev, before = fixed.evidence, original.evidence
    if ev is None:
        return None
    old = {p.name for p in before.params if p.forward_change is not None} if before else set()
    changed = [p for p in ev.params if p.forward_change is not None and p.name not in old]
    if changed:
        names = _named([p.name for p in changed])
        line = changed[0].forward_change
        return T(f"with it the forward pass on line {line} overwrites {names or 'a parameter'} "
                 "in place, outside any optimizer step",
                 f"改动后第 {line} 行的前向计算会原地覆盖{f' {names}' if names else '一个参数'}，"
                 "而这不在任何优化器的 step 里")
    # (a loss whose broadcast failed warned before it raised: one that now runs so, on a
    # target of another shape, is that mismatch made silent)
    if _broadcasts(fixed) and (not _broadcasts(original) or original.outcome != "ok"):
        return T("with it the loss broadcasts the prediction against a target of another "
                 "shape instead of comparing them element by element",
                 "改动后损失把预测与形状不同的目标互相广播，而不是逐元素比较")
    # a module with BatchNorm or Dropout trained on only in eval mode: the error of a batch
    # of one goes away, and the model no longer trains as written
    in_eval = {m.module for m in ev.modules if m.backward and (m.batchnorm or m.dropout)
               and not m.training}
    in_eval -= {m.module for m in ev.modules if m.backward and m.training}
    if before is not None:
        in_eval -= {m.module for m in before.modules if m.backward and not m.training}
    if in_eval:
        name = sorted(in_eval)[0]
        return T(f"with it `{name}` is trained in eval mode: its BatchNorm or Dropout no "
                 "longer behaves as in training",
                 f"改动后 `{name}` 在 eval 模式下训练：它的 BatchNorm 或 Dropout 不再按训练时的"
                 "方式工作")
    idle = [s for s in ev.steps if s.after_backward and s.n_params and s.grads_none == s.n_params]
    was_idle = {s.optimizer for s in before.steps if s.after_backward and s.n_params
                and s.grads_none == s.n_params} if before else set()
    idle = [s for s in idle if s.optimizer not in was_idle]
    if idle:
        return T(f"with it `{idle[0].optimizer}` steps after backward() without a gradient for "
                 "any of its parameters, so they never learn",
                 f"改动后 `{idle[0].optimizer}` 在 backward() 之后执行 step，但它的参数都没有梯度，"
                 "因而永远学不到")
    if before is None or fixed.outcome != "ok":
        return None
    # an optimizer that stepped in the program's own run, even one cut short by its error,
    # and never steps in the fixed one: what it trains no longer learns (a step deleted to
    # make "modified by an inplace operation" go away)
    # an optimizer is told by its name and the class whose method steps it: two classes'
    # `self.optimizer` (an actor's and a critic's) are two optimizers (the class, not the
    # method: a fix may rename the method, as one that stops shadowing `train` does)
    def key(step: StepEvidence) -> tuple[str, str | None]:
        owner = step.where.rsplit(".", 1)[0] if step.where and "." in step.where else None
        return step.optimizer, owner

    gone = [o for o in dict.fromkeys(key(s) for s in before.steps)
            if not any(key(s) == o for s in ev.steps)]
    if gone:
        name = gone[0][0]
        held = next(s.params for s in before.steps if key(s) == gone[0])
        what = _named(sorted(held)) if any(
            s.optimizer == name and key(s) != gone[0] for s in before.steps + ev.steps) else None
        return T(f"with it `{name}`" + (f" (holding {what})" if what else "") + " never takes "
                 "a step, so what it trains no longer learns",
                 f"改动后 `{name}`" + (f"（持有 {what}）" if what else " ") +
                 "一次 step 也不执行，它要训练的参数不再学习")
    # an optimizer whose steps used every backward() pass since its last step, and now finds
    # the gradients of one cleared before it steps: a step moved past a zero_grad() steps on
    # another loss's gradients (a GAN's discriminator on the generator's loss)
    # (step by step: the original's n-th step of that optimizer used every pass; one the
    # original never reached, after the program's own skip, is the program's doing)
    def nth(steps: list[StepEvidence]) -> dict[tuple[tuple[str, str | None], int],
                                                 StepEvidence]:
        seen: dict[tuple[str, str | None], int] = {}
        out = {}
        for step in steps:
            at = seen[key(step)] = seen.get(key(step), -1) + 1
            out[key(step), at] = step
        return out

    was = nth(before.steps)
    cleared = next((s for at, s in nth(ev.steps).items() if s.discarded and at in was
                    and not was[at].discarded), None)
    if cleared is not None:
        line = cleared.discarded[0]
        return T(f"with it the gradients of the backward() on line {line} are cleared before "
                 f"`{cleared.optimizer}` steps, so it steps on those of another backward()",
                 f"改动后第 {line} 行 backward() 的梯度在 `{cleared.optimizer}` step 之前就被清空，"
                 "它用的是另一次 backward() 的梯度")
    # a parameter a backward() reaches that no step finds a gradient for any more: what
    # the fixed program computes for it is cleared (or comes too late) before every step
    had = {p.name for p in before.params if p.steps_without_grad}
    bare = [p for p in ev.params if p.reached and p.requires_grad and p.steps_without_grad
            and p.name not in had and not (intent is not None and intent.may_freeze(p.name))]
    if bare:
        names = _named([p.name for p in bare]) or "a parameter"
        one = len(_shown([p.name for p in bare])) <= 1
        return T(f"with it backward() still reaches {names}, but every optimizer step finds "
                 f"{'its gradient' if one else 'their gradients'} cleared, so "
                 f"{'it no longer learns' if one else 'they no longer learn'}",
                 f"改动后 backward() 仍会到达 {names}，但每次优化器 step 时它的梯度都已被清空，"
                 "因而不再学习")
    return _breaks_intent(original, before, ev, intent or Intent())


def _breaks_intent(original: RunResult, before: Evidence, after: Evidence, intent: Intent
                   ) -> Text | None:
    """What the fixed run (``after``) did against what the program meant: the parameters it
    trained (moved by an optimizer in the original run) must still get a gradient and move;
    the ones it meant to freeze (its freezing code, misspelt or not, and no optimizer given
    them) must not move; it must take as many training steps (it went through every pass)."""
    now = {p.name: p for p in after.params}
    stepped = bool(before.steps)
    shown_frozen = {n for u in before.training.unfrozen for n in u.params}
    # a tensor the run names once, by one of its names: two names that were one network
    # (target_net = policy_net) are two after a fix that copies it, and the trained one
    # may go by the other name; only fewer moving parameters is a loss of training
    fewer = sum(1 for p in after.params if p.changed) < sum(1 for p in before.params
                                                          if p.changed)
    for p in before.params if fewer else ():
        if not (p.in_optimizer and p.changed) or intent.may_freeze(p.name) or \
                p.name in shown_frozen:
            continue  # a parameter the program may have meant frozen may stop
        got = now.get(p.name)
        # no backward() reaches it any more, or no optimizer steps it (a zero gradient that
        # an optimizer steps is the model's own: a bias before a BatchNorm in training mode)
        lost = got is None or (p.reached and not got.reached)
        if lost or (got is not None and got.changed is False and not got.in_optimizer):
            verb = "gets no gradient" if lost else "no longer changes"
            verb_zh = "得不到梯度" if lost else "不再变化"
            return T(f"with it `{p.name}`, which your program trains, {verb}",
                     f"改动后你的程序训练的 `{p.name}` {verb_zh}")
    for p in after.params:
        freeze = intent.freeze_of(p.name)
        if freeze is None or not p.changed:
            continue
        was = next((q for q in before.params if q.name == p.name), None)
        trained = was.in_optimizer if stepped and was is not None else intent.trains(p.name)
        if trained is False and not (was is not None and was.changed):
            # the freeze's line is the learner's; the text is not renumbered for the change
            return T(f"with it `{p.name}` changes in training, which your program's freezing "
                     "code meant to keep fixed (and gave no optimizer)",
                     f"改动后 `{p.name}` 会在训练中变化，而你的程序的冻结代码本意是让它保持不变"
                     "（也没有把它交给优化器）")
    summed, now_passes = _summed_passes(before), _summed_passes(after)
    # with one optimizer every loss trains what it holds, and one step on the sum is a way
    # to write it; with several, a pass one's step now adds is another optimizer's loss
    several = len({s.optimizer for s in [*before.steps, *after.steps]}) > 1
    # passes the program already ran before each of that optimizer's steps, one loss line,
    # only cleared in between: adding them up is the accumulation it wrote, no other loss
    ran = {s.optimizer: s.passes for s in before.steps if s.passes_line is not None}
    for opt, count in now_passes.items() if several else ():
        if count > max(summed.get(opt, 0), 1) and opt in summed and count > ran.get(opt, 0):
            return T(f"with it `{opt}` steps on the gradients of {count} backward() passes "
                     f"added up, where your program stepped on those of {summed[opt]}: another "
                     "loss's gradient reaches what it updates",
                     f"改动后 `{opt}` 的 step 用的是 {count} 次 backward() 累加起来的梯度，"
                     f"而你的程序用的是 {summed[opt]} 次的：别的损失的梯度也进入了它要更新的参数")
    # a trial its budget ended (an early expectation reads the first passes) stopped because
    # the diagnosis had seen enough, not because the fixed program skips passes
    # (a pass is a step after a backward(): a second step of the same optimizer with no
    # backward() between, removed, is no pass lost)
    took, takes = _stepped_passes(before), _stepped_passes(after)
    if original.outcome == "ok" and after.cut is None and takes < took:
        return T(f"with it the program takes {takes} optimizer steps instead of "
                 f"{took}: it no longer goes through every pass",
                 f"改动后程序只执行 {takes} 次优化器 step，而不是 {took} "
                 "次：它不再走完每一轮")
    return None


def _stepped_passes(ev: Evidence) -> int:
    """The optimizer steps of a run, each optimizer's steps after one count of backward()
    passes counted once (a step before any backward() counts on its own)."""
    after = {(s.optimizer, s.where, s.after_backward) for s in ev.steps if s.after_backward}
    return len(after) + sum(1 for s in ev.steps if not s.after_backward)


def _summed_passes(ev: Evidence) -> dict[str, int]:
    """For each optimizer, the most backward() passes whose gradients one of its steps used
    added up (passes since its last step that found the earlier ones not cleared)."""
    out: dict[str, int] = {}
    for step in ev.steps:
        if step.passes:
            out[step.optimizer] = max(out.get(step.optimizer, 0), step.passes - step.cleared)
    return out


def _broadcasts(result: RunResult) -> bool:
    return any("different to the input size" in w.message for w in result.warnings)


# -- what a fix must not lose, read from the two programs ------------------------------------
def loses_change(old_code: str, new_code: str) -> Text | None:
    """A statement that changed a tensor in place (``channel.mul_(s)``, ``x += 1``) rewritten
    out of place into a name nothing reads afterwards: the error goes away because the change
    no longer happens. A loop over a container's parts (``for channel in img:``) changes the
    container only in place; its rebound loop variable is dropped at the next pass."""
    old_lines, new_lines = old_code.splitlines(), new_code.splitlines()
    try:
        tree = syntax_tree.parse(new_code)
    except SyntaxError:
        return None
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            continue
        before, after = _statement(old_lines[i1]), _statement(new_lines[j1])
        if not (isinstance(before, (ast.Expr, ast.AugAssign)) and isinstance(after, ast.Assign)
                and len(after.targets) == 1 and isinstance(after.targets[0], ast.Name)):
            continue
        name, line = after.targets[0].id, j1 + 1
        if not _read_after(tree, name, line):
            return T(f"with it line {i1 + 1} puts its result in `{name}`, which nothing reads "
                     "afterwards: the change that line made in place no longer happens",
                     f"改动后第 {i1 + 1} 行把结果放进 `{name}`，而之后没有任何地方读取它："
                     "那一行原本的原地修改不再发生")
    return None


def _statement(line: str) -> ast.stmt | None:
    try:
        body = syntax_tree.parse(line.strip()).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _read_after(tree: ast.Module, name: str, line: int) -> bool:
    """``name`` is read after ``line`` in the function (or module) around it, or, inside a
    loop that does not rebind it, anywhere in that loop (the next pass reads it)."""
    scope: ast.AST = tree
    loops: list[ast.For | ast.While] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno) and \
                (scope is tree or node.lineno > getattr(scope, "lineno", 0)):
            scope = node
    for node in ast.walk(scope):
        if isinstance(node, (ast.For, ast.While)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            loops.append(node)
    reads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load)]
    if any(n.lineno > line for n in reads):
        return True
    for loop in loops:
        rebinds = isinstance(loop, ast.For) and any(
            isinstance(t, ast.Name) and t.id == name for t in ast.walk(loop.target))
        if not rebinds and any(loop.lineno <= n.lineno <= (loop.end_lineno or loop.lineno)
                               for n in reads):
            return True
    return False
