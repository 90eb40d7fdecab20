"""How often the diagnosis is right, how fast it arrives, and what it costs a run that does not
fail: on a corpus of learner programs rebuilt from real public questions (corpus2's format),
and on the older sets the team wrote (regression sets).

    python benchmarks/bench_diagnosis.py --split dev [--split test] [--corpus DIR]
        [--show] [--dump FILE] [--ab DIR [--ab-rounds N]]
    python benchmarks/bench_diagnosis.py [--only corpus|heldout|heldout2] [--show-misses]

A corpus (``--corpus``, default tests/diagnosis/corpus2; rubric in its README) is a folder of
``NAME.yaml`` files, each ``{items: [...]}``; ``--split NAME`` scores ``NAME.yaml`` (several
``--split`` score several, each with its own table, then all together). Every program runs in
the real sandbox, then ``tutor.diagnosis.reasoning.diagnose`` (instrumented re-run, checks,
fixes tried in the sandbox) answers; the first diagnosis is judged right (family, root-cause
line and a verified fix), family only, generic, wrong-specific or none, by kind (exception /
silent bug), next to the plain traceback on the same programs. An item whose ``family`` is not
in :data:`FAMILIES` cannot be judged by the rubric: it is counted in its own ``unjudged`` row,
never in the percentages, and its diagnosis is still dumped for a judge to read.

Untried code: how many diagnoses (every one given) show a fix that writes the run's facts into
a change of the program (``loss.sum().backward()``) that no trial verified.

Text contract: how many diagnoses (every one given, not only the first) break it
(``tutor.diagnosis.contract``: a placeholder shown, a line the program does not have, a name
the program does not have, a fix that changes nothing, a stray space in Chinese).

Latency: the wall time of ``diagnose`` (evidence re-run, checks and fix trials together),
after the learner's own run returned; p50 and p95, with the machine's load beside it.

``--dump FILE`` writes one JSON object a line per item (id, kind, family, the program, the
error it raised, the first diagnosis in English: id, title, text, root-cause line, fix, whether
the fix was verified and what its re-run showed, the chain of evidence; the latency), for a
judge who reads them blind: no rubric verdict is in it.

``--ab DIR``: the cost a run that does not fail pays for the evidence machinery. DIR is a
checkout of the commit before it (``git worktree add /tmp/before 97f0daa``) or any other
baseline; this checkout and DIR each start their own sandbox in a worker process, and the
programs of the scored splits that ran without error are run in turns (the side that goes
first alternates each round), paced as a learner runs code. Reported: p50 wall per side and
the median of the paired differences, for all of those programs and for the ones that build
no optimizer (``--ab-without-optimizer``: only those).

The older sets: each program in ``tests/diagnosis/corpus``, ``heldout`` and ``heldout2``
names the diagnosis it must get in a ``# expect: ID`` header (``none``: no diagnosis at all;
``generic``: the honest generic one); counted as right, wrong-specific, generic or missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.diagnosis import explain  # noqa: E402
from tutor.diagnosis.contract import violations  # noqa: E402
from tutor.diagnosis.models import Diagnosis  # noqa: E402
from tutor.sandbox import Sandbox  # noqa: E402
from tutor.sandbox.models import RunResult  # noqa: E402

try:
    from tutor.diagnosis.advice import shows_untried_code
except ImportError:  # a baseline checkout from before it: the same count from its pieces
    from tutor.diagnosis.advice import proposes_change
    from tutor.diagnosis.catalog import load_catalog

    def shows_untried_code(diagnosis: Diagnosis) -> bool:
        entry = next((e for e in load_catalog().entries if e.id == diagnosis.id), None)
        return entry is not None and not (diagnosis.fix_verified or diagnosis.generic) \
            and proposes_change(entry, diagnosis.fix)

Item = dict[str, Any]

SETS = {
    "corpus": ROOT / "tests" / "diagnosis" / "corpus",
    "heldout": ROOT / "tests" / "diagnosis" / "heldout",
    # Written by someone who never read the rules or the other programs, only the catalog's ids.
    "heldout2": ROOT / "tests" / "diagnosis" / "heldout2",
}
EXPECT = re.compile(r"^# expect: ([a-z0-9-]+)\s*$", re.MULTILINE)
CORPUS2 = ROOT / "tests" / "diagnosis" / "corpus2"
KINDS = ("exception", "silent")

# The catalog ids that name each root-cause family (the rubric's "right family").
FAMILIES: dict[str, set[str]] = {
    "softmax-before-ce": {"softmax-before-ce", "softmax-before-nll"},
    "zero-grad-missing": {"missing-zero-grad", "optimizer-grads-never-cleared"},
    "zero-grad-misplaced": {"zero-grad-misplaced", "zero-grad-erases-accumulation"},
    "backward-not-called": {"backward-not-called", "backward-missing"},
    "step-not-called": {"step-not-called", "step-missing"},
    "dropout-no-eval": {"dropout-no-eval"},
    "batchnorm-no-eval": {"batchnorm-single-sample", "dropout-no-eval", "batchnorm-no-eval"},
    "requires-grad-after-use": {"requires-grad-after-use", "requires-grad-too-late"},
    "optimizer-wrong-params": {"optimizer-wrong-params", "optimizer-empty-params",
                               "optimizer-empty-group", "optimizer-params-tensor",
                               "params-used-up"},
    "lr-too-high": {"lr-too-high"},
    "scheduler-stepped-per-batch": {"lr-schedule-collapse", "scheduler-outpaces-optimizer"},
    "loss-total-keeps-graph": {"loss-total-keeps-graph"},
    "loader-iterator-exhausted": {"iterator-exhausted"},
    "module-train-overridden": {"method-takes-torchs-place"},
    "mse-broadcast": {"loss-target-broadcast", "loss-target-size", "target-size-differs",
                      "loss-argument-shapes"},
    "graph-cut-silent": {"graph-cut-silent", "data-attribute", "loss-rebuilt-as-leaf",
                         "params-unreached-warned", "loss-term-without-gradient"},
    "double-sigmoid": {"double-sigmoid", "sigmoid-twice"},
    "frozen-params": {"frozen-params", "params-frozen-when-built"},
    "relu-output": {"relu-output", "output-range"},
    "backward-twice": {"backward-twice", "backward-twice-loop", "backward-twice-carried"},
    "loss-class-called-with-tensors": {"module-called-with-tensors"},
    "ce-target-shape": {"ce-target-shape", "ce-target-float-shape", "ce-classes-not-dim1"},
    "rnn-tuple-output": {"tuple-in-sequential", "tuple-used-as-tensor"},
    "loss-not-a-tensor": {"tuple-used-as-tensor"},
    "lost-graph": {"no-grad-fn", "no-grad-fn-no-grad-block", "no-grad-fn-no-leaf",
                   "no-grad-fn-detached", "no-grad-fn-python-number", "no-grad-fn-frozen",
                   "no-grad-fn-integer", "backward-in-no-grad", "backward-on-python-number",
                   "subject-without-grad", "grad-switched-off"},
    "inplace-saved": {"inplace-modified-output", "inplace-modified-input"},
    "leaf-inplace": {"leaf-inplace", "leaf-inplace-update", "leaf-view-inplace"},
    "non-scalar-backward": {"non-scalar-backward", "gradient-shape-mismatch"},
    "numpy-requires-grad": {"numpy-requires-grad", "numpy-of-loss-history", "numpy-of-loss-total"},
    "linear-shape": {"linear-in-features", "mm-shape-mismatch", "matvec-shape-mismatch",
                     "mm-needs-matrix", "bmm-shape-mismatch"},
    "view-shape": {"view-invalid-shape", "view-not-contiguous", "flatten-mixes-batch"},
    "conv-channels": {"conv-channels", "conv-input-rank"},
    "embedding-float-indices": {"embedding-of-embedding", "embedding-index-dtype", "wanted-kind"},
    "dtype-mismatch": {"dtype-mismatch", "dtype-long-float", "dtype-double-float",
                       "dtype-float-double-layer", "dtype-double-float-operands",
                       "mean-of-integers", "wanted-kind", "inplace-into-integers"},
    "ce-target-dtype": {"ce-target-dtype", "ce-target-float-shape", "ce-target-shape",
                        "ce-probabilities-long"},
    "ce-target-range": {"ce-target-out-of-bounds", "ce-target-negative"},
    "ignore-index-mismatch": {"ce-target-negative"},
    "batch-size-mismatch": {"ce-batch-mismatch", "batch-sliced-one-side"},
    "bool-ambiguous": {"bool-ambiguous"},
    "grad-none": {"grad-none-nonleaf", "grad-none", "grad-is-none", "nonleaf-grad-read",
                  "nonleaf-grad-warning", "grad-none-no-requires-grad",
                  "leaf-converted-after-requires-grad", "param-loop-none-grad"},
    "nonleaf-requires-grad": {"nonleaf-requires-grad"},
    "int-requires-grad": {"int-requires-grad"},
    # silent families read off the training trace (tutor/diagnosis/trace_checks.py)
    "nan-gradient": {"nan-from-op", "nan-outside-domain"},
    "nll-without-log-softmax": {"nll-without-log-softmax", "softmax-before-nll"},
    "train-mode-not-restored": {"train-mode-not-restored"},
    "dropout-training-flag": {"dropout-training-flag", "attention-dropout-in-eval"},
    "shared-batchnorm": {"shared-batchnorm"},
    "inplace-activation-overwrites-input": {"inplace-overwrites-input"},
    "lr-too-low": {"lr-too-low"},
    "freeze-undone": {"freeze-undone"},
    "symmetric-init": {"symmetric-init"},
    "params-not-registered": {"params-not-registered", "params-in-plain-container"},
    "zero-gradient-op": {"zero-gradient-op"},
    "softmax-wrong-dim": {"softmax-wrong-dim", "softmax-over-batch", "samples-mixed"},
    # message classes of torch's own error space (tests/diagnosis/error_space)
    "cat-shape": {"cat-size-mismatch"},
    "broadcast": {"broadcast-mismatch"},
    "optimizer-non-leaf": {"optimizer-non-leaf"},
    "grad-unused": {"grad-unused-input", "grad-input-not-requiring-grad", "subject-without-grad",
                    "grad-inputs-frozen"},
    "item-multi-element": {"item-multi-element", "tensor-from-tensors"},
    "state-dict-shape": {"state-dict-shape"},
    "forward-signature": {"forward-signature"},
    "device": {"device-mismatch", "device-mismatch-layer", "cuda-not-available",
               "unknown-device-string", "numpy-on-gpu"},
    "dim-range": {"dim-out-of-range"},
    "shadowed-callable": {"tensor-not-callable", "tensor-result-called"},
    "not-a-tensor": {"not-a-tensor"},
    "module-init": {"module-init-not-called"},
    "embedding-range": {"embedding-index-range"},
    "bce-range": {"bce-input-range", "bce-given-tanh"},
    # common messages (A) (tutor/diagnosis/message_checks.py)
    "buffer-name-taken": {"assigned-before-registered"},
    "expand-size": {"expand-size-mismatch"},
    "inplace-broadcast-target": {"inplace-target-too-small"},
    "rnn-state-batch-size": {"rnn-state-batch", "size-fixed-at-creation", "last-batch-smaller"},
    "module-container-called": {"container-called"},
    "one-cycle-total-steps": {"schedule-too-short"},
    "one-hot-float": {"one-hot-float-labels", "wanted-kind"},
    # shape provenance (tutor/diagnosis/shape_checks.py): corpus5's and shapes_dev's families
    "batch-dim-flattened": {"batch-merged", "flatten-mixes-batch"},
    "squeeze-drops-batch": {"squeeze-drops-batch"},
    "output-indexed": {"index-drops-batch"},
    "missing-batch-dim": {"missing-batch-dim"},
    "extra-batch-dim": {"extra-batch-dim"},
    "rnn-input-shape": {"missing-feature-dim", "missing-batch-dim"},
    "layer-size-hard-coded": {"linear-in-features", "rnn-input-size"},
    "size-hard-coded-batch": {"size-fixed-at-creation", "rnn-state-batch", "last-batch-smaller"},
    "batch-sliced-one-side": {"batch-sliced-one-side"},
    "wrong-output-element": {"wrong-output-element"},
    "skip-connection-size": {"sizes-diverged"},
    # silent-bug classes of public checklists (tests/diagnosis/error_space/silent.yaml)
    "shuffle-apart": {"shuffle-apart"},
    "clip-order": {"clip-order"},
    # parameter accounting, aliasing, what a loss compares (corpus5 families, silent_dev)
    "layers-built-in-forward": {"layers-built-in-forward"},
    "module-requires-grad-attr": {"module-requires-grad-attr"},
    "requires-grad-typo": {"requires-grad-typo"},
    "target-net-aliased": {"target-net-aliased"},
    "target-copied-from-itself": {"target-copied-from-itself", "target-mixed-with-itself"},
    "target-cast-to-long": {"target-cast-to-long"},
    "unnormalized-target": {"unnormalized-target"},
    "empty-mask-division": {"nan-from-op"},
    "output-range-excludes-targets": {"output-range", "relu-output"},
    "gradients-discarded": {"gradients-discarded"},
    "minus-instead-of-assign": {"result-discarded", "result-thrown-away"},
    "detach-result-discarded": {"result-thrown-away"},
    "scheduler-step-before-optimizer": {"scheduler-before-optimizer"},
    "normalization-precedence": {"normalize-precedence"},
    "state-dict-not-copied": {"state-dict-kept-by-reference"},
    "ce-single-score-per-sample": {"ce-one-sample"},
    "vector-column-broadcast": {"vector-column-broadcast"},
    "gradcheck-float32": {"gradcheck-float32"},
    "conversion-discarded": {"conversion-discarded", "result-discarded"},
    # a value of another kind than the call wants (kind_checks), and what classes define
    "bce-target-dtype": {"wanted-kind"},
    "mask-not-bool": {"wanted-kind"},
    "scatter-index-dtype": {"wanted-kind"},
    "layer-size-float": {"wanted-kind"},
    "optimizer-given-module": {"wanted-kind", "optimizer-wrong-params"},
    "zero-dim-index": {"wanted-kind"},
    "forward-not-defined": {"forward-not-found"},
    "custom-function-grad-count": {"backward-count"},
    "state-dict-prefix": {"state-dict-prefix", "state-dict-prefix-missing"},
    "parameter-overwritten-by-tensor": {"parameter-assigned"},
    "inplace-memory-overlap": {"message-remedy"},
    "pack-unsorted-lengths": {"message-remedy"},
    "rnn-batch-first-mismatch": {"rnn-batch-first"},
    "custom-function-backward-missing": {"function-without-backward"},
    "save-for-backward-non-tensor": {"saved-non-tensor"},
    "init-on-1d-tensor": {"init-on-vector"},
    # corpus13's families (training material since its scoring) and the checks of 2026-12-07
    "distribution-scale-not-positive": {"distribution-constraint"},
    "logits-passed-as-probs": {"distribution-constraint"},
    "kl-div-input-not-log": {"kl-div-given-probabilities"},
    "sequential-given-list": {"modules-given-as-list"},
    "scheduler-last-epoch-without-initial-lr": {"scheduler-resumed-fresh",
                                                "scheduler-built-before-resume",
                                                "scheduler-resume-initial-lr"},
    "custom-function-grad-shape": {"backward-grad-shape"},
    "fully-masked-softmax-nan": {"masked-row-nan"},
    "params-cast-to-bfloat16": {"updates-rounded-away"},
    "state-dict-never-loaded": {"weights-never-loaded"},
    "grad-accumulation-not-averaged": {"accumulation-summed"},
    "log-probs-averaged-before-weighting": {"reduced-before-weighting"},
    "bool-tensor-subtraction": {"wanted-kind"},
    "vmap-random-op": {"message-remedy"},
    "sparse-grad-dense-optimizer": {"message-remedy"},
    "optimizer-recreated-in-loop": {"optimizer-rebuilt"},
    "lr-set-on-optimizer-attribute": {"hyperparameter-as-attribute"},
    "step-outside-batch-loop": {"step-outside-batch-loop"},
    "manual-update-over-frozen-param": {"param-loop-none-grad"},
    "eval-preprocessing-mismatch": {"inputs-unlike-training"},
    "view-instead-of-permute": {"view-reorders-dims"},
    "scheduler-period-in-batches-stepped-per-epoch": {"schedule-sized-in-batches"},
    "create-graph-missing": {"loss-term-without-gradient"},
    "argmax-used-as-value": {"index-used-as-value"},
    "bootstrap-from-online-network": {"copy-never-run"},
    "autograd-function-legacy-call": {"legacy-autograd-function"},
    "clip-before-unscale": {"clip-scaled-gradients"},
    "clip-misplaced": {"clip-order"},
    # the checks of the twelfth session
    "batch-first-ignored": {"batch-first-missing", "rnn-batch-first"},
    "mha-batch-first-missing": {"batch-first-missing", "rnn-batch-first", "attention-batch-first"},
    "ranking-target-shape": {"loss-argument-shapes"},
    "prediction-size-differs": {"loss-argument-shapes"},
    "freeze-flag-ignored": {"freeze-flag-unused"},
    "tied-weights-shape-mismatch": {"layer-weight-replaced"},
    # the checks of the fourteenth session
    "forward-called-directly-skips-hooks": {"forward-skips-hooks"},
    "legacy-backward-hook-last-op": {"legacy-backward-hook"},
    "rnn-dropout-single-layer": {"rnn-dropout-one-layer"},
    "optimizer-duplicate-params": {"optimizer-duplicate-params"},
    "scheduler-get-lr-outside-step": {"scheduler-get-lr-outside-step"},
    "kl-div-mean-reduction": {"kl-div-mean-reduction"},
    "training-flag-not-propagated": {"argument-not-passed-on"},
    "lr-read-as-string": {"yaml-number-as-string"},
    "init-on-absent-parameter": {"parameter-absent"},
    "checkpoint-dict-loaded-as-state-dict": {"whole-checkpoint-loaded"},
    "parameter-generators-nested-in-param-list": {"parameters-appended"},
    "return-inside-loop": {"return-inside-loop"},
    "sampler-with-shuffle": {"dataloader-sampler-and-shuffle"},
    "split-lengths-dont-sum": {"random-split-lengths"},
    "dataset-item-none": {"collate-none-item"},
    "lstm-cell-state-not-tuple": {"lstm-hidden-not-tuple"},
    "reduction-too-few-values": {"reduction-too-few-values"},
    "std-of-single-sample": {"reduction-too-few-values"},
    "instance-norm-axis": {"instance-norm-axis"},
    "grad-read-before-backward": {"grad-read-before-backward"},
    "optimizer-stepped-twice": {"optimizer-stepped-twice"},
    "fp16-params-with-grad-scaler": {"amp-fp16-weights"},
    "scaler-step-without-gradients": {"amp-optimizer-without-grads"},
    "unscale-before-every-micro-step": {"amp-unscaled-twice", "amp-update-skipped",
                                        "amp-update-missing"},
    "scaler-update-without-step": {"amp-step-bypassed"},
    "gradscaler-update-skipped": {"amp-update-skipped", "amp-update-missing",
                                  "amp-unscaled-twice"},
    "dataparallel-attribute-not-forwarded": {"wrapper-hides-attribute"},
    "module-attribute-without-dataparallel": {"module-of-unwrapped"},
    "layernorm-size-mismatch": {"layer-built-for-other-size"},
    "inplace-on-split-view": {"iterated-rows-modified"},
    "loss-passed-to-optimizer-step": {"value-given-as-closure"},
    "plateau-step-without-metric": {"plateau-without-metric"},
    "layernorm-on-channels-first": {"layernorm-channels-first"},
    "padding-same-strided": {"same-padding-strided"},
    "optimizer-built-from-empty-group": {"optimizer-empty-group"},
    "adam-eps-underflows-in-fp16": {"adam-eps-float16"},
    "custom-optimizer-not-optimizer-subclass": {"optimizer-not-subclass"},
    "batchnorm-input-rank-mismatch": {"norm-rank-mismatch"},
    "variable-set-in-one-branch": {"unbound-in-branch"},
    "lr-lambda-given-number": {"lr-lambda-not-function"},
    "checkpoint-indexed-with-missing-key": {"checkpoint-key-missing"},
    "last-batch-size-assumed-full": {"last-batch-smaller", "size-fixed-at-creation"},
    "rnn-hidden-batch-size": {"rnn-state-batch", "last-batch-smaller"},
    "optimizer-state-param-set-mismatch": {"optimizer-state-mismatch"},
    "scheduler-given-optimizer-wrapper": {"scheduler-given-wrapper"},
    "bn-momentum-convention": {"batchnorm-momentum-convention"},
    "sample-instead-of-rsample": {"sample-without-graph"},
    "module-reused-in-list": {"module-list-multiplied"},
}
OWN_FAMILIES = ("gradcheck-mismatch", "retain-grad-no-requires-grad", "inference-tensor-saved",
                "inference-tensor-requires-grad", "grad-assign-shape", "conv-kernel-too-big",
                "pool-output-too-small", "input-eof", "softmax-implicit-dim",
                "tensor-copy-construct", "requires-grad-to-scalar", "loss-not-falling",
                "nan-first-seen", "rnn-hidden-size")
"""Catalog ids that are a family of their own (no other id names the same root cause)."""
FAMILIES.update({cid: {cid} for cid in OWN_FAMILIES})
FREQUENT_B_FAMILIES = ("deepcopy-non-leaf", "state-dict-used-as-model", "dataloader-not-iterator",
                       "parameters-not-called", "cat-rank-mismatch", "batchnorm-width",
                       "tensor-from-strings", "ragged-tensor", "forward-missing-argument",
                       "numpy-object-array")
"""Catalog ids for frequent messages (benchmarks/frequent_messages.md), each its own family."""
FAMILIES.update({cid: {cid} for cid in FREQUENT_B_FAMILIES})
VERDICTS = ("right", "family only", "generic", "wrong-specific", "none")


# -- the older sets ------------------------------------------------------------------------
def classify(expected: str, got: list[tuple[str, bool]]) -> str:
    """One of right / wrong-specific / generic / missed for a program's diagnoses."""
    if expected == "none":
        return "right" if not got else ("generic" if got[0][1] else "wrong-specific")
    if not got:
        return "missed"
    first_id, first_generic = got[0]
    if expected == "generic":
        return "right" if first_generic else "wrong-specific"
    if first_generic:
        return "generic"
    return "right" if first_id == expected else "wrong-specific"


def score(sandbox: Sandbox, folder: Path, show_misses: bool) -> tuple[Counter[str], int]:
    """The verdicts, and how many diagnoses break the text contract."""
    counts: Counter[str] = Counter()
    broken = 0
    for path in sorted(folder.glob("*.py")):
        code = path.read_text(encoding="utf-8")
        found = EXPECT.search(code)
        if found is None:
            print(f"  {path.name}: no '# expect:' header, skipped")
            continue
        expected = found.group(1)
        result = sandbox.run(code)
        diagnoses = explain(result, code)
        broken += sum(1 for d in diagnoses if violations(d, code))
        got = [(d.id, d.generic) for d in diagnoses]
        verdict = classify(expected, got)
        counts[verdict] += 1
        if show_misses and verdict != "right":
            shown = ", ".join(i for i, _ in got) or "nothing"
            print(f"  {verdict:14} {path.name}: expected {expected}, got {shown}")
    return counts, broken


# -- a corpus in corpus2's format ----------------------------------------------------------
def judge(item: Item, first: Diagnosis | None) -> str:
    """The rubric of corpus2/README.md, applied to a system's first diagnosis."""
    family = FAMILIES.get(item.get("family", ""))
    if family is None:
        return "unjudged"
    if first is None:
        return "none"
    if first.generic:
        return "generic"
    if first.id not in family:
        return "wrong-specific"
    line = first.root_line or first.line
    if line in item.get("root_lines", []) and first.fix_verified:
        return "right"
    return "family only"


def baseline(result: RunResult) -> str:
    """The plain traceback: an exception's message and failing line, nothing for a silent
    bug."""
    return "generic" if result.error is not None else "none"


def load_split(split: str, corpus: Path = CORPUS2) -> list[Item]:
    import yaml  # type: ignore[import-untyped]

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    path = corpus / f"{split}.yaml"
    with path.open(encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=loader)
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise SystemExit(f"{path}: no 'items' list")
    return [dict(item, split=split) for item in items]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_now() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def dump_record(item: Item, result: RunResult, first: Diagnosis | None,
                latency_s: float) -> dict[str, Any]:
    error = result.error
    diagnosis = None
    if first is not None:
        diagnosis = {
            "id": first.id, "generic": first.generic, "title": first.title.en,
            "text": first.explanation.en, "line": first.line, "root_line": first.root_line,
            "fix": first.fix.en, "fix_verified": first.fix_verified,
            "fix_check": first.fix_check.en if first.fix_check else None,
            "patch": first.patch, "chain": [step.en for step in first.chain],
            "alternatives": first.alternatives,
            "tell_apart": first.tell_apart.en if first.tell_apart else None,
        }
    return {
        "id": item.get("id"), "split": item.get("split"), "kind": item.get("kind"),
        "family": item.get("family"), "code": item.get("code"),
        "error": None if error is None else {"type": error.type, "message": error.message,
                                             "line": error.line},
        "diagnosis": diagnosis, "latency_ms": round(1000 * latency_s, 1),
    }


class Table:
    """Verdicts by kind, the traceback baseline beside them, latencies."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
        self.base: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
        self.trace_line_right: Counter[str] = Counter()
        self.unjudged: Counter[str] = Counter()
        self.latency: dict[str, list[float]] = {k: [] for k in KINDS}
        self.diagnoses = 0
        self.broken = 0  # diagnoses that break the text contract (tutor/diagnosis/contract.py)
        self.untried = 0  # diagnoses whose fix writes the run's facts into code no trial ran

    def add(self, item: Item, verdict: str, result: RunResult, latency: float,
            found: list[Diagnosis]) -> None:
        self.diagnoses += len(found)
        self.broken += sum(1 for d in found if violations(d, str(item.get("code", ""))))
        self.untried += sum(1 for d in found if shows_untried_code(d))
        kind = str(item.get("kind")) if item.get("kind") in KINDS else "exception"
        self.latency[kind].append(latency)
        if verdict == "unjudged":
            self.unjudged[kind] += 1
            return
        self.counts[kind][verdict] += 1
        self.base[kind][baseline(result)] += 1
        if result.error is not None and result.error.line in item.get("root_lines", []):
            self.trace_line_right[kind] += 1

    def merge(self, other: Table) -> None:
        for kind in KINDS:
            self.counts[kind] += other.counts[kind]
            self.base[kind] += other.base[kind]
            self.latency[kind] += other.latency[kind]
        self.trace_line_right += other.trace_line_right
        self.unjudged += other.unjudged
        self.diagnoses += other.diagnoses
        self.broken += other.broken
        self.untried += other.untried

    def print(self) -> None:
        total_items = sum(sum(c.values()) for c in self.counts.values()) + sum(
            self.unjudged.values())
        print(f"{self.name}: {total_items} programs (rubric: tests/diagnosis/corpus2/README.md)")
        print(f"  {'kind':9} {'n':>3}  " + "  ".join(f"{v:>16}" for v in VERDICTS))
        for kind in KINDS:
            counts = self.counts[kind]
            total = sum(counts.values())
            if not total:
                continue
            cells = "  ".join(f"{counts[v]:9} ({100 * counts[v] / total:3.0f}%)"
                              for v in VERDICTS)
            print(f"  {kind:9} {total:3}  {cells}")
            base = self.base[kind]
            bcells = "  ".join(f"{base[v]:9} ({100 * base[v] / total:3.0f}%)"
                               for v in VERDICTS)
            print(f"  {'traceback':9} {total:3}  {bcells}  (its line is a root-cause line "
                  f"in {self.trace_line_right[kind]})")
        allc = self.counts["exception"] + self.counts["silent"]
        total = sum(allc.values())
        if total:
            print(f"  all       {total:3}: right {allc['right']} "
                  f"({100 * allc['right'] / total:.1f}%), wrong-specific "
                  f"{allc['wrong-specific']} ({100 * allc['wrong-specific'] / total:.1f}%)")
        if self.unjudged:
            print(f"  unjudged  {sum(self.unjudged.values()):3}: family not in FAMILIES "
                  f"(exception {self.unjudged['exception']}, silent "
                  f"{self.unjudged['silent']}); not in the figures above, see --dump")
        every = self.latency["exception"] + self.latency["silent"]
        cells = ", ".join(
            f"{name} p50 {1000 * percentile(values, 0.5):.0f} / p95 "
            f"{1000 * percentile(values, 0.95):.0f} ms"
            for name, values in (("all", every), *self.latency.items()) if values)
        print(f"  diagnosis latency (re-run + checks + fix trials): {cells}")
        print(f"  text contract: {self.broken} of {self.diagnoses} diagnoses break it; "
              f"untried code in a fix: {self.untried}")


def score_corpus(sandbox: Sandbox, corpus: Path, splits: list[str], show: bool,
                 dump: Path | None) -> tuple[Table, list[Item]]:
    from tutor.diagnosis.reasoning import diagnose

    overall = Table(f"{corpus.name} {'+'.join(splits)}")
    ran_ok: list[Item] = []
    out = dump.open("w", encoding="utf-8") if dump is not None else None
    try:
        for split in splits:
            table = Table(f"{corpus.name} {split}")
            for item in load_split(split, corpus):
                code = item["code"]
                result = sandbox.run(code)
                started = time.perf_counter()
                found = diagnose(code, result, sandbox)
                latency = time.perf_counter() - started
                first = found[0] if found else None
                verdict = judge(item, first)
                table.add(item, verdict, result, latency, found)
                if result.outcome == "ok":
                    ran_ok.append(item)
                if out is not None:
                    out.write(json.dumps(dump_record(item, result, first, latency),
                                         ensure_ascii=False) + "\n")
                if show:
                    got = "nothing" if first is None else (
                        f"{first.id} line {first.root_line or first.line} "
                        f"verified={first.fix_verified}")
                    print(f"  {verdict:14} {item.get('id', '?'):42} want {item.get('family')} "
                          f"{item.get('root_lines')}; got {got}; {1000 * latency:.0f} ms")
            table.print()
            overall.merge(table)
    finally:
        if out is not None:
            out.close()
    if len(splits) > 1:
        overall.print()
    return overall, ran_ok


# -- the A/B: what a run that does not fail pays -------------------------------------------
WORKER = """
import json, sys, time
from tutor.sandbox import Sandbox
with Sandbox() as sandbox:
    sandbox.run("pass")
    print("ready", flush=True)
    for line in sys.stdin:
        ms = []
        for code in json.loads(line):
            time.sleep(0.05)  # a learner's pace: the standby is ready when a run comes
            started = time.perf_counter()
            result = sandbox.run(code)
            ms.append([1000 * (time.perf_counter() - started), result.outcome])
        print(json.dumps(ms), flush=True)
"""


class Worker:
    def __init__(self, checkout: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(checkout))
        self.checkout = checkout
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], cwd=checkout, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"the sandbox of {checkout} did not start")

    def run(self, codes: list[str]) -> list[tuple[float, str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(codes) + "\n")
        self.proc.stdin.flush()
        return [(float(ms), str(outcome)) for ms, outcome in json.loads(
            self.proc.stdout.readline())]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def ab(items: list[Item], baseline_dir: Path, rounds: int) -> None:
    codes = [item["code"] for item in items]
    if not codes:
        print("A/B: no program ran without error")
        return
    print(f"A/B, a run that does not fail: this checkout against {baseline_dir} "
          f"({len(codes)} programs x {rounds} rounds, in turns; {load_now()})")
    sides = {"this": Worker(ROOT), "base": Worker(baseline_dir)}
    times: dict[str, list[list[float]]] = {"this": [], "base": []}
    try:
        for index in range(rounds):
            order = ["this", "base"] if index % 2 == 0 else ["base", "this"]
            for side in order:
                got = sides[side].run(codes)
                times[side].append([ms for ms, _ in got])
    finally:
        for worker in sides.values():
            worker.close()
    plain = [i for i, code in enumerate(codes) if "optim." not in code]
    for label, chosen in (("all", range(len(codes))), ("without an optimizer", plain)):
        chosen = list(chosen)
        if not chosen:
            continue
        this = [r[i] for r in times["this"] for i in chosen]
        base = [r[i] for r in times["base"] for i in chosen]
        paired = [a - b for a, b in zip(this, base, strict=True)]
        print(f"  {label:21} ({len(chosen):3} programs): p50 this {statistics.median(this):7.1f}"
              f" ms, base {statistics.median(base):7.1f} ms; median paired difference "
              f"{statistics.median(paired):+6.2f} ms")
    print(f"  ({load_now()} at the end)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(SETS))
    parser.add_argument("--corpus", type=Path, default=CORPUS2,
                        help="a folder of NAME.yaml splits in corpus2's format")
    parser.add_argument("--split", action="append",
                        help="score the corpus's NAME.yaml (repeatable)")
    parser.add_argument("--show", action="store_true", help="one line per program")
    parser.add_argument("--dump", type=Path, help="one JSON object a line per program")
    parser.add_argument("--ab", type=Path, metavar="DIR",
                        help="A/B a run that does not fail against the checkout DIR")
    parser.add_argument("--ab-rounds", type=int, default=5)
    parser.add_argument("--ab-without-optimizer", action="store_true",
                        help="A/B only programs that build no optimizer (a baseline without "
                        "the torch._dynamo warm-up pays seconds for each of the others)")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    if args.split:
        for split in args.split:
            if not (args.corpus / f"{split}.yaml").is_file():
                parser.error(f"no split {split!r}: {args.corpus / (split + '.yaml')} is missing")
        if args.ab is not None and not (args.ab / "tutor" / "sandbox").is_dir():
            parser.error(f"--ab {args.ab}: not a checkout of autograd-tutor")
        print(f"({load_now()} at the start)")
        with Sandbox() as sandbox:
            _, ran_ok = score_corpus(sandbox, args.corpus, args.split, args.show, args.dump)
        print(f"({load_now()} at the end)")
        if args.ab is not None:
            if args.ab_without_optimizer:
                ran_ok = [item for item in ran_ok if "optim." not in item["code"]]
            ab(ran_ok, args.ab.resolve(), args.ab_rounds)
        return 0
    with Sandbox() as sandbox:
        for name, folder in SETS.items():
            if args.only and name != args.only:
                continue
            counts, broken = score(sandbox, folder, args.show_misses)
            total = sum(counts.values())
            if not total:
                print(f"{name}: no programs")
                continue
            right = counts["right"]
            print(
                f"{name:8} {total:3} programs: right {right} ({100 * right / total:.1f}%), "
                f"wrong-specific {counts['wrong-specific']}, generic {counts['generic']}, "
                f"missed {counts['missed']}; text contract broken by {broken} diagnoses"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
