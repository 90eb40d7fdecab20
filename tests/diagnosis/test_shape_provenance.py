"""Shape provenance (tutor/diagnosis/shape_checks.py, size_checks.py, lineage.py): for each
kind of line that gives a tensor its wrong shape, a small program of its own with the
mistake, named at that line with the chain of shapes in both languages and a fix that was
tried, and the same program written right, which gets no such diagnosis."""

from __future__ import annotations

from typing import Any

import pytest

from tutor.diagnosis import checks
from tutor.diagnosis.contract import violations
from tutor.diagnosis.lineage import Lineage
from tutor.sandbox.models import ChainLink, OperandEvidence

from .runs import verified_diagnosis

SHAPE_IDS = {"index-drops-batch", "batch-merged", "squeeze-drops-batch", "missing-batch-dim",
             "missing-feature-dim", "extra-batch-dim", "rnn-input-size", "sizes-diverged",
             "wrong-output-element", "size-fixed-at-creation", "batch-sliced-one-side"}

# (expected id, root line, the tried patch contains, buggy program, (its line as written,
# the line written right))
CASES = [
    # an index kept one sample of a model's output: the loss sees 10 scores for 6 labels
    ("index-drops-batch", 5, "scores = net(x)\n", """import torch
net = torch.nn.Linear(3, 10)
x = torch.randn(6, 3)
y = torch.randint(0, 10, (6,))
scores = net(x)[0]
print(torch.nn.functional.cross_entropy(scores, y))
""",
     ('scores = net(x)[0]', 'scores = net(x)')),
    # out[-1] of a batch-first sequence output is the last sample, not the last step
    ("index-drops-batch", 9, "out[:, -1]", """import torch
import torch.nn as nn

rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 3)
seqs = torch.randn(5, 7, 4)
labels = torch.randint(0, 3, (5,))
out, _ = rnn(seqs)
last = out[-1]
print(nn.functional.cross_entropy(head(last), labels))
""",
     ('last = out[-1]', 'last = out[:, -1]')),
    # an accuracy's argmax over the batch (dim=0) keeps one index per class, not per sample:
    # compared with the 1-D labels (the other side has no second dimension to show a batch)
    ("batch-merged", 8, "argmax(dim=1)", """import torch
import torch.nn as nn

clf = nn.Linear(8, 3)
feats = torch.randn(20, 8)
labels = torch.randint(0, 3, (20,))
with torch.no_grad():
    guesses = clf(feats).argmax(dim=0)
    hits = (guesses == labels).float().mean()
print(hits.item())
""",
     ('argmax(dim=0)', 'argmax(dim=1)')),
    # a flatten from dimension 0 inside a method runs the samples of the batch together
    ("batch-merged", 10, "torch.flatten(self.conv(x), 1)", """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.fc = nn.Linear(2 * 4 * 4, 5)
    def forward(self, x):
        h = torch.flatten(self.conv(x))
        return self.fc(h)

print(Net()(torch.randn(3, 1, 4, 4)).shape)
""",
     ('h = torch.flatten(self.conv(x))', 'h = torch.flatten(self.conv(x), 1)')),
    # per-view features joined along the batch: 12 rows for 4 labels
    ("batch-merged", 7, "dim=1", """import torch
import torch.nn as nn

enc = nn.Linear(5, 2)
head = nn.Linear(6, 3)
views = [torch.randn(4, 5) for _ in range(3)]
feats = torch.cat([enc(v) for v in views], dim=0)
labels = torch.randint(0, 3, (4,))
print(nn.functional.cross_entropy(head(feats), labels))
""",
     ("views], dim=0)", "views], dim=1)")),
    # squeeze() of the last batch of one removes the batch too
    ("squeeze-drops-batch", 8, "squeeze(1)", """import torch
import torch.nn as nn

net = nn.Linear(3, 1)
x = torch.randn(5, 3)
y = torch.rand(5)
for start in range(0, 5, 2):
    out = net(x[start:start + 2]).squeeze()
    print(nn.functional.binary_cross_entropy_with_logits(out, y[start:start + 2]))
""",
     ('out = net(x[start:start + 2]).squeeze()', 'out = net(x[start:start + 2]).squeeze(1)')),
    # one image without its batch dimension: the convolution runs it unbatched, the
    # BatchNorm after it refuses it
    ("missing-batch-dim", 12, "unsqueeze(0)", """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
    def forward(self, x):
        return self.bn(self.conv(x))

image = torch.rand(3, 8, 8)
print(Net().eval()(image).shape)
""",
     ('image = torch.rand(3, 8, 8)', 'image = torch.rand(3, 8, 8).unsqueeze(0)')),
    # a series of numbers without the feature axis an LSTM(input_size=1) wants
    ("missing-feature-dim", 5, "unsqueeze(-1)", """import torch
import torch.nn as nn
lstm = nn.LSTM(1, 4, batch_first=True)
windows = torch.stack([torch.arange(i, i + 6.0) for i in range(10)])
out, _ = lstm(windows, (torch.zeros(1, 10, 4), torch.zeros(1, 10, 4)))
print(out.shape)
""",
     ("lstm(windows, (", "lstm(windows.unsqueeze(-1), (")),
    # a batch given one dimension more: stacked samples already are the batch
    ("extra-batch-dim", 5, "batch = torch.stack(frames)\n", """import torch
import torch.nn as nn
conv = nn.Conv2d(3, 2, 3)
frames = [torch.rand(3, 6, 6) for _ in range(4)]
batch = torch.stack(frames).unsqueeze(0)
print(conv(batch).shape)
""",
     ('batch = torch.stack(frames).unsqueeze(0)', 'batch = torch.stack(frames)')),
    # a recurrent layer built for 50 features per step, given 20-d embeddings
    ("rnn-input-size", 6, "nn.GRU(20, 8", """import torch
import torch.nn as nn
EMB = 50
emb = nn.Embedding(30, 20)
tokens = torch.randint(0, 30, (2, 9))
gru = nn.GRU(EMB, 8, batch_first=True)
print(gru(emb(tokens))[0].shape)
""",
     ('EMB = 50', 'EMB = 20')),
    # a skip connection whose upsampled map comes back one pixel off an odd size
    ("sizes-diverged", 10, "torch.nn.functional.pad(up", """import torch
import torch.nn as nn

down = nn.Conv2d(2, 2, 3, stride=2, padding=1)
upsample = nn.ConvTranspose2d(2, 2, 2, stride=2)

def block(x):
    skip = torch.relu(x)
    up = upsample(down(skip))
    return torch.cat([up, skip], dim=1)

print(block(torch.rand(1, 2, 9, 9)).shape)
""",
     ('print(block(torch.rand(1, 2, 9, 9)).shape)', 'print(block(torch.rand(1, 2, 8, 8)).shape)')),
    # inputs sliced into mini-batches, labels left whole
    ("batch-sliced-one-side", 9, "labels[i:i + 2]", """import torch
import torch.nn as nn

net = nn.Linear(3, 4)
x = torch.randn(6, 3)
labels = torch.randint(0, 4, (6,))
for i in range(0, 6, 2):
    out = net(x[i:i + 2])
    loss = nn.functional.cross_entropy(out, labels)
    print(loss.item())
""",
     ("(out, labels)", "(out, labels[i:i + 2])")),
    # a mask made with the configured batch size meets the last, smaller batch
    ("size-fixed-at-creation", 5, "torch.ones(d.size(0))", """import torch
BATCH = 4

def weighted(d):
    w = torch.ones(BATCH)
    return (w * d).sum()

data = torch.rand(10)
for start in range(0, 10, BATCH):
    print(weighted(data[start:start + BATCH]))
""",
     ('w = torch.ones(BATCH)', 'w = torch.ones(d.size(0))')),
]


IDS = [f"{c[0]}-{n}" for n, c in enumerate(CASES)]


@pytest.mark.parametrize(("cid", "root", "fix_has", "buggy", "change"), CASES, ids=IDS)
def test_the_line_that_gave_the_shape_is_named_and_fixed(
        cid: str, root: int, fix_has: str, buggy: str, change: tuple[str, str],
        sandbox: Any) -> None:
    first = verified_diagnosis(sandbox, buggy, {cid}, root, fix_has)
    for text in (first.title, first.explanation, first.fix, *first.chain):
        assert text.en and text.zh and text.en != text.zh
    assert violations(first, buggy) == [], violations(first, buggy)


@pytest.mark.parametrize(("cid", "root", "fix_has", "buggy", "change"), CASES, ids=IDS)
def test_the_program_written_right_gets_no_shape_diagnosis(
        cid: str, root: int, fix_has: str, buggy: str, change: tuple[str, str],
        sandbox: Any) -> None:
    from tutor.diagnosis.reasoning import diagnose

    right = buggy.replace(*change, 1)
    assert right != buggy
    result = sandbox.run(right)
    assert result.ok, result.error
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        found = diagnose(right, result, sandbox)
    finally:
        checks.DEBUG = debug
    assert not {d.id for d in found} & SHAPE_IDS, [d.id for d in found]


WRONG_ELEMENT = """import torch
import torch.nn as nn
from collections import namedtuple

Out = namedtuple("Out", ["logits", "hidden_states"])

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.head = nn.Linear(6, 40)
    def forward(self, x):
        h = torch.tanh(self.body(x))
        return Out(self.head(h), (x, h))

enc = Encoder()
x = torch.randn(2, 5, 6)
outputs = enc(x)
last = outputs[0]
first = outputs.hidden_states[0]
print((last + first).mean())
"""


def test_an_element_of_a_models_output_taken_by_position_is_named(sandbox: Any) -> None:
    """``outputs[0]`` is the (2, 5, 40) scores the head made, not a hidden state: the line
    that took it is the root, with the layer that made its size; no change is proposed
    (which element was meant is the learner's to say), and the text says none was tried."""
    from tutor.diagnosis.reasoning import diagnose

    debug, checks.DEBUG = checks.DEBUG, True
    try:
        first = diagnose(WRONG_ELEMENT, sandbox.run(WRONG_ELEMENT), sandbox)[0]
    finally:
        checks.DEBUG = debug
    assert (first.id, first.root_line) == ("wrong-output-element", 19)
    assert "`outputs[0]`" in first.explanation.en and "`outputs[0]`" in first.explanation.zh
    assert any("`head`" in step.en and "40" in step.en for step in first.chain)
    assert first.patch is None and not first.fix_verified
    assert violations(first, WRONG_ELEMENT) == []
    right = WRONG_ELEMENT.replace("last = outputs[0]", "last = outputs.hidden_states[-1]")
    found = diagnose(right, sandbox.run(right), sandbox)
    assert not {d.id for d in found} & SHAPE_IDS


def _candidates(sandbox: Any, code: str) -> list[Any]:
    from tutor.diagnosis.candidate import Ctx
    from tutor.diagnosis.flow import Flow

    run = sandbox.run(code, instrument=True)
    flow = Flow.of(code)
    assert flow is not None and run.evidence is not None
    debug, checks.DEBUG = checks.DEBUG, True
    try:
        return checks.candidates(Ctx(code=code, flow=flow, result=run, evidence=run.evidence,
                                     error=run.error))
    finally:
        checks.DEBUG = debug


def test_whole_batches_joined_into_a_bigger_one_are_no_merge(sandbox: Any) -> None:
    """Real and generated images joined along dimension 0 make one batch of 16 on purpose;
    the labels are for 8 of them. Joining along dimension 1 would run (with a layer built
    for 6 channels) and train on real and fake images as channels of one sample: no
    merged-batch claim, and no such fix."""
    code = """import torch
import torch.nn as nn

D = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 1))
real = torch.rand(8, 3, 8, 8)
fake = torch.rand(8, 3, 8, 8)
batch = torch.cat([real, fake], 0)
labels = torch.ones(8, 1)
print(nn.functional.binary_cross_entropy_with_logits(D(batch), labels))
"""
    assert not {c.id for c in _candidates(sandbox, code)} & SHAPE_IDS


def test_a_reshape_that_kept_the_batch_is_not_said_to_mix_it(sandbox: Any) -> None:
    """``x.view(x.size(0), -1)`` keeps one row per sample: a batch mismatch at the loss is
    not its doing (check_batch said it mixed samples, and tried flatten(1))."""
    code = """import torch
import torch.nn as nn

conv = nn.Conv2d(1, 2, 3)
fc = nn.Linear(2 * 4 * 4, 3)
images = torch.rand(12, 1, 6, 6)
labels = torch.randint(0, 3, (12,))
for i in range(0, 12, 4):
    h = conv(images[i:i + 4])
    out = fc(h.view(h.size(0), -1))
    print(nn.functional.cross_entropy(out, labels))
"""
    found = _candidates(sandbox, code)
    assert not any(key == "view-mixes" for c in found for key, _ in c.steps)
    assert found and max(found, key=lambda c: c.confidence).id == "batch-sliced-one-side"


def test_the_layer_size_stays_when_the_rows_are_the_batch(sandbox: Any) -> None:
    """(4, 512) rows into ``nn.Linear(2048, ...)``: 4 x 512 is 2048, but the lineage shows
    each row is one of the 4 images, pooled and flattened from dimension 1: the layer is
    built for the wrong size, the data is no sample to flatten."""
    code = """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 512, 3), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(2048, 2)
    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))

print(Net()(torch.randn(4, 3, 8, 8)).shape)
"""
    first = verified_diagnosis(sandbox, code, {"linear-in-features"}, 8, "nn.Linear(512, 2)")
    assert any("4 samples" in step.en for step in first.chain)


# -- the lineage itself, on histories written by hand ----------------------------------
def _operand(*links: tuple[int, str, list[int], str | None]) -> OperandEvidence:
    """Links oldest first as (line, op, shape, args); the history is stored newest first."""
    history = [ChainLink(line=line, op=op, shape=shape, args=args, index=n)
               for n, (line, op, shape, args) in enumerate(links)]
    return OperandEvidence(arg="0", shape=links[-1][2], history=list(reversed(history)))


def test_the_lineage_finds_the_op_that_took_the_batch() -> None:
    lineage = Lineage(_operand((1, "randn", [8, 3], None), (2, "linear", [8, 5], None),
                               (3, "__getitem__", [5], "0")))
    assert [s.line for s in lineage.lost(8)] == [3]
    # a mini-batch sliced from the data is a new batch, not a lost one
    sliced = Lineage(_operand((1, "randn", [9, 3], None), (2, "__getitem__", [1, 3], "8:12"),
                              (3, "linear", [1, 5], None)))
    assert sliced.lost(9) == [] and sliced.lost(1) == []
    # a flatten across the batch, then a join along it: both ran the samples together
    merged = Lineage(_operand((1, "randn", [10, 8], None), (2, "flatten", [80], "0, -1"),
                              (3, "cat", [480], "0")))
    assert [s.line for s in merged.lost(10)] == [2, 3]
    # where the batch stays in dimension 0 nothing is lost, whatever the other sizes
    kept = Lineage(_operand((1, "randn", [4, 3, 8, 8], None), (2, "conv2d", [4, 512, 1, 1], None),
                            (3, "flatten", [4, 512], "1")))
    assert kept.lost(4) == [] and kept.batch_kept()


def test_the_lineage_knows_a_sample_that_went_in_without_its_batch() -> None:
    one = _operand((1, "rand", [3, 16, 16], None), (2, "conv2d", [8, 8, 8], None),
                   (2, "flatten", [8, 64], "1"))
    links = [link.model_copy(update={"module": "net"}) if link.op != "rand" else link
             for link in one.history]
    lineage = Lineage(one.model_copy(update={"history": links}))
    assert lineage.entered_unbatched() and not lineage.batch_kept()


# -- what the instrumented run records for it ------------------------------------------
def test_the_run_records_a_module_that_refused_its_input(sandbox: Any) -> None:
    """BatchNorm2d checks its input's dimensions in Python before any op runs: the run
    names that module as the failing op ``forward``, with its sizes and its input's
    provenance."""
    code = """import torch
bn = torch.nn.BatchNorm2d(3)
image = torch.rand(3, 4, 4) * 2
print(bn(image))
"""
    failed = sandbox.run(code, instrument=True).evidence.failed
    assert (failed.op, failed.module_kind, failed.line) == ("forward", "BatchNorm2d", 4)
    assert failed.config["num_features"] == 3
    made = failed.inputs[0]
    assert (made.shape, made.line, made.op) == ([3, 4, 4], 3, "mul")


def test_shape_ops_keep_their_arguments_and_layers(sandbox: Any) -> None:
    code = """import torch
net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Flatten(0))
x = torch.randn(5, 3)
out = torch.cat([net(x), net(x)], 0)[1:]
print(torch.nn.functional.cross_entropy(out, torch.zeros(5, dtype=torch.long)))
"""
    failed = sandbox.run(code, instrument=True).evidence.failed
    history = failed.inputs[0].history
    assert [(link.op, link.args) for link in history[:3]] == [
        ("__getitem__", "1:"), ("cat", "0"), ("flatten", "0, -1")]
    assert (history[2].layer, history[2].layer_kind) == ("net.1", "Flatten")
    assert len({link.index for link in history}) == len(history)


def test_an_operand_expression_is_quoted_as_written() -> None:
    """The message's own words name the operands of ``(1 - mask) * dist`` as the learner
    wrote them: the parentheses a snippet needs around an expression are not shown in the
    prose (they made `((1 - mask) * dist)`, text the program does not have)."""
    from tutor.diagnosis import diagnose_error

    from .runs import failed

    code = ("import torch\nmask = torch.eye(8)\ndist = torch.rand(4, 4)\n"
            "neg = (1 - mask) * dist + mask\n")
    got = diagnose_error(failed(code, "RuntimeError", "The size of tensor a (8) must match the "
                                "size of tensor b (4) at non-singleton dimension 1", 4), code)
    assert got is not None and got.id == "broadcast-mismatch"
    assert violations(got, code) == [], violations(got, code)
    assert "`(1 - mask) * dist`" in got.fix.en and "`(1 - mask) * dist`" in got.fix.zh


# The hidden state of a sequence-first LSTM fed (batch, time, features): `h_n[-1]` is
# (time, hidden), the right index of the wrong layout. The run gives each output of the
# LSTM its own record, so the index is seen taken from (1, time, hidden), not from the
# output's (batch, time, hidden), and is not said to drop the batch (corpus31's
# imdb-lstm-hidden-from-dim1 was blamed on its `h_n[-1]`).
HIDDEN_OF_SEQ_FIRST = """import torch
import torch.nn as nn

encoder = nn.GRU(input_size=6, hidden_size=5)
head = nn.Linear(5, 3)
tokens = torch.randn(8, 12, 6)
labels = torch.randint(0, 3, (8,))
outputs, h_n = encoder(tokens)
scores = head(h_n[-1])
print(nn.functional.cross_entropy(scores, labels))
"""


def test_each_output_of_a_recurrent_layer_has_its_own_shape_in_the_record(
        sandbox: Any) -> None:
    from .runs import diagnoses_for

    found = diagnoses_for(sandbox, HIDDEN_OF_SEQ_FIRST)
    assert found and "index-drops-batch" not in {d.id for d in found}, [
        (d.id, d.root_line) for d in found]
    result = sandbox.run(HIDDEN_OF_SEQ_FIRST)
    assert result.error is not None and result.error.line == 10


# A loop over every time step of a sequence-first tensor, `seq[t]`, walks dimension 0; the
# matmul that fails is given 12 features where the second cell wants 9 (each cell is given the
# raw input). With the sequence as long as the features are wide, the failing row's size
# matches the sequence length, but no label counts a batch there: the index is not said to
# drop a batch (corpus31's stacked-bnlstm-layers-get-raw-input was blamed on `input_[t]`).
TIME_LOOP = """import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self, size_in, hidden):
        super().__init__()
        self.ih = nn.Linear(size_in, hidden)
        self.hh = nn.Linear(hidden, hidden)

    def forward(self, x, h):
        return torch.tanh(self.ih(x) + self.hh(h))


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.cells = nn.ModuleList([Cell(12, 9), Cell(9, 9)])

    def forward(self, seq):
        for cell in self.cells:
            h = seq.new_zeros(seq.size(1), 9)
            outs = []
            for t in range(seq.size(0)):
                h = cell(seq[t], h)
                outs.append(h)
        return torch.stack(outs)


print(Stacked()(torch.randn(12, 5, 12)).shape)
"""


def test_an_index_that_walks_every_time_step_is_not_said_to_drop_the_batch(
        sandbox: Any) -> None:
    from .runs import diagnoses_for

    result = sandbox.run(TIME_LOOP)
    assert result.error is not None and result.error.line == 12
    found = diagnoses_for(sandbox, TIME_LOOP, result)
    assert "index-drops-batch" not in {d.id for d in found}, [(d.id, d.root_line) for d in found]


# A recurrent layer's final state (layers, batch, hidden) squeezed at dimension 0, and labels
# built as one row (1, batch): the label row is what differs. The state's dimension 0 of size 1
# is its layers, not a batch of one the data never was: the squeeze is not said to drop a
# batch (shapes_dev's bce-labels-built-with-extra-dim-sentiment, once each output of the
# layer had its own shape in the record).
STATE_SQUEEZED = """import torch
import torch.nn as nn

rnn = nn.GRU(6, 5)
head = nn.Linear(5, 1)
steps = torch.randn(9, 32, 6)
labels = torch.tensor([[float(i % 2) for i in range(32)]])
_, state = rnn(steps)
scores = head(state.squeeze(0)).squeeze(1)
print(nn.functional.binary_cross_entropy_with_logits(scores, labels))
"""


def test_a_squeezed_layers_dimension_is_no_batch_of_one(sandbox: Any) -> None:
    from .runs import diagnoses_for

    found = diagnoses_for(sandbox, STATE_SQUEEZED)
    assert found and found[0].id == "target-size-differs" and found[0].root_line == 7, [
        (d.id, d.root_line) for d in found]
    assert "squeeze-drops-batch" not in {d.id for d in found}


# An autoencoder whose flattening module was built for smaller images: given 16x16 images
# it views (2, 8, 4, 4) as (-1, 32), four rows a sample, and the reconstruction meets the
# images with another batch. The images' dimension 0 is the batch (a loss of two image-shaped
# tensors), and the size comes from where the program builds its View: that line is named.
# (corpus32's vaal-vae-flatten-hardcoded-for-32px was a bare broadcast diagnosis)
CONFIGURED_VIEW = """import torch
import torch.nn as nn


class Reshape(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.view(self.shape)


encoder = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(), Reshape((-1, 8 * 2 * 2)))
decoder = nn.Sequential(nn.Linear(32, 64), Reshape((-1, 1, 8, 8)))
images = torch.rand(2, 1, 16, 16)
recon = nn.functional.interpolate(decoder(encoder(images)), size=16)
print(nn.functional.mse_loss(recon, images))
"""


def test_a_batch_merged_by_a_module_points_where_its_size_is_given(sandbox: Any) -> None:
    from .runs import diagnoses_for

    result = sandbox.run(CONFIGURED_VIEW)
    assert result.error is not None
    first = diagnoses_for(sandbox, CONFIGURED_VIEW, result)[0]
    assert (first.id, first.root_line) == ("batch-merged", 14), (first.id, first.root_line)
    assert "`Reshape((-1, 8 * 2 * 2))` on line 14" in first.explanation.en
    assert any("built with on line 14" in step.en for step in first.chain)
