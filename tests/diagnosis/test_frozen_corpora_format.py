"""The frozen test splits of learner programs from corpus9 on, each described once in
:data:`SETS`: its format, the promises its README makes (size, mix, sources never used before),
that test.yaml is the file that was frozen, and that every program still does on this torch
what its record says. Runs the programs, never the diagnosis engine.

A new split is one more :class:`FrozenCorpus` here (and its folder with ``test.yaml`` and a
README; ``frozen_corpus.py SPLIT --check`` records and checks it); the earlier splits are the
ones before it in the table."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from .frozen_corpus import (
    assert_mix,
    assert_sources_new,
    assert_valid_and_recorded,
    judged_places,
    load_recorder,
    unexplained_families,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BEFORE = tuple(f"corpus{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8))
"""The corpora before the first split of :data:`SETS` (each has its own format test)."""
DEV_SETS = ("heldout", "heldout2", "error_space", "shapes_dev", "silent_dev")


@dataclass(frozen=True)
class FrozenCorpus:
    """One frozen split and what its README promises."""

    name: str
    sha256: str
    """test.yaml as committed in its freezing commit: an edit after it fails here."""
    chinese: int
    """At least this many Chinese sources."""
    families: int
    """At least this many families."""
    judged_later: tuple[str, ...] = ()
    """The judged records of the split's own scoring and after: they quote its sources."""
    beside: tuple[str, ...] = ()
    """The question sets (``tests/chat/``) built side by side with it for the same measure:
    not earlier material (neither builder saw the other's sources)."""


F_CHAT = ("learner21", "learner22")
"""The question sets of the measure of 2026-12-07-f, built beside corpus25 to corpus28."""
G_CHAT = ("learner23", "learner24")
"""The question sets of the measure of 2026-12-07-g, built beside corpus29 to corpus32."""
H_CHAT = ("learner25", "learner26")
"""The question sets of the measure of 2026-12-07-h, built beside corpus33 to corpus36."""
I_CHAT = ("learner27", "learner28")
"""The question sets of the measure of 2026-12-08-i, built beside corpus37 to corpus40."""
SETS = (
    FrozenCorpus("corpus9", "0519d371d9d620919126a94719aa3816dbd60722e37098605a294d7abbd09366",
                 chinese=5, families=20, judged_later=("2026-12-06-d",)),
    FrozenCorpus("corpus10", "96fc0569b59928766b8fbc9e323afab03b730e4caaaf3836c189ed47a8e5e8bf",
                 chinese=4, families=18, judged_later=("2026-12-06-e",)),
    FrozenCorpus("corpus11", "c01a5d5966187bbf9b7febdc1a27f9a6ac57c5828b80bf47cb82106b9bc063d6",
                 chinese=4, families=18, judged_later=("2026-12-06-f",)),
    FrozenCorpus("corpus12", "0276393ec01650583d89192c8136b4316dd588f8de9eb98715bf92731b675573",
                 chinese=4, families=18, judged_later=("2026-12-06-g",)),
    FrozenCorpus("corpus13", "d1aed6fed662d977bd6e12f44d54607706b1ec0d3aa66ac2b34f1ec77f5e239a",
                 chinese=4, families=20, judged_later=("2026-12-06-h",)),
    FrozenCorpus("corpus14", "d881be15e84d40bf1a0236a4fd255638ed025f7affee402c827b7698da667c83",
                 chinese=4, families=20, judged_later=("2026-12-07",)),
    FrozenCorpus("corpus15", "c28f152478d2d6b80f8c525b3216417868d6be4de242e1950bc0065d411dca2f",
                 chinese=4, families=20, judged_later=("2026-12-07-b",)),
    FrozenCorpus("corpus16", "98410e4e9459ef10d9b1dcf513d9a24cb0c26811fc794421feadf1ffc40baaef",
                 chinese=4, families=19, judged_later=("2026-12-07-c",)),
    # corpus17 to corpus20: one measure's four splits, built blind side by side, each from
    # its own topic area (their READMEs); a later one's sources are new against the earlier
    FrozenCorpus("corpus17", "06a73f91aa5ee47c257ec4d190f0870d3bce2dce3b58b805e058973f6c7a1925",
                 chinese=4, families=20, judged_later=("2026-12-07-d",)),
    FrozenCorpus("corpus18", "2506c0d788c951adf5b87c482b0a2ff2fcefbfaa9984c9fdff8a3bf42b36a63b",
                 chinese=4, families=20, judged_later=("2026-12-07-d",)),
    FrozenCorpus("corpus19", "801b150a5489c627a3572eaa728400bd0b485809eb8e771524f7d5ad9192248f",
                 chinese=4, families=20, judged_later=("2026-12-07-d",)),
    FrozenCorpus("corpus20", "7a168d2b7735e26a6f92b748f263258f26ec83503bd8168f94f14693e911fa56",
                 chinese=4, families=20, judged_later=("2026-12-07-d",)),
    # corpus21 to corpus24: the measure of 2026-12-07-e, four splits built blind side by side,
    # each from its own topic area (mechanics, training loop, models, applied setups)
    FrozenCorpus("corpus21", "514b374eaafd827191548c432c6fdc2eb2fdec77ab778f252812f3b84509dd51",
                 chinese=4, families=20, judged_later=("2026-12-07-e",)),
    FrozenCorpus("corpus22", "db88e56d331fe9d60d39db02702d522104582fb64e166686b596e0e0e91c3975",
                 chinese=4, families=20, judged_later=("2026-12-07-e",)),
    FrozenCorpus("corpus23", "e1ba85be7d7d05edc91430576eee7b3e564391fb68e1fffe09c7ea7308515b98",
                 chinese=4, families=20, judged_later=("2026-12-07-e",)),
    FrozenCorpus("corpus24", "2fd68e1b666369db8b8271433a2a15c797658000c68dfd25ebe3c431ef90d1df",
                 chinese=4, families=20, judged_later=("2026-12-07-e",)),
    # corpus25 to corpus28: the measure of 2026-12-07-f, splits built blind side by side, each
    # from its own topic area (autograd mechanics, the training loop, models and modules,
    # applied setups)
    FrozenCorpus("corpus25", "e364993c2f96227b7d4517168958d4ab2a345be28cd467690e993d99b8fee829",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-f",), beside=F_CHAT),
    FrozenCorpus("corpus26", "b2ae0f2f89c20d46f7b7aeef95860776e65d2d9884ccfdebe6ad668294293ce5",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-f",), beside=F_CHAT),
    FrozenCorpus("corpus27", "a7a7b7ea57117442f25a96e3ea8e1c5a3f74749439ed8963cfa30e76b4f3c6e5",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-f",), beside=F_CHAT),
    FrozenCorpus("corpus28", "edaa472dafb2769bf27d7e307e88384ffc80a4799cf163e802592a1cac2e82a7",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-f",), beside=F_CHAT),
    # corpus29 to corpus32: the measure of 2026-12-07-g, splits built blind side by side, each
    # from its own topic area (autograd mechanics, the training loop, models and modules,
    # applied setups)
    FrozenCorpus("corpus29", "32cbad4d5c7880c37c8ce9ba26f8b96edb9ec1b8a79b8ae995a32bc60deedf70",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-g",), beside=G_CHAT),
    FrozenCorpus("corpus30", "9bbf9a192e20ce4e503109ebf76af5f4a5ed79662bec2eb9014669977bfb0a63",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-g",), beside=G_CHAT),
    FrozenCorpus("corpus31", "350f739264ac067cf88d5bb855730507de68e210f45fc9ffbde8afdca7fb50b1",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-g",), beside=G_CHAT),
    FrozenCorpus("corpus32", "1d466c970d55cb1318ad648f8d4947a38f62f4f697a8de1241d99ddd03d89d70",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-g",), beside=G_CHAT),
    # corpus33 to corpus36: the measure of 2026-12-07-h, splits built blind side by side, each
    # from its own topic area (autograd mechanics, the training loop, models and modules,
    # applied setups). corpus33 holds 24 programs and 2 Chinese sources (its README says why)
    FrozenCorpus("corpus33", "251f7a0fcaba45b09725e789b6d54df09c2afc1c550cf2e62018f9a95a7129d3",
                 chinese=2, families=20,
                 judged_later=("2026-12-07-h",), beside=H_CHAT),
    FrozenCorpus("corpus34", "8db4ae3973341a6a451cd86a5b49cf5e9d4d4d86d985ebd18c6c73ec45dc628e",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-h",), beside=H_CHAT),
    FrozenCorpus("corpus35", "54162ea90ccc694b5836d6b25c8fe18115b66ef87559edb3decd74d482952381",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-h",), beside=H_CHAT),
    FrozenCorpus("corpus36", "2b0eeb6203e28b1f94039229138d6a3adef0abaa95c838aa22830ef5d752d848",
                 chinese=4, families=20,
                 judged_later=("2026-12-07-h",), beside=H_CHAT),
    # corpus37: the autograd-mechanics split of the measure of 2026-12-08-i (built blind beside
    # the other splits); it holds 2 Chinese sources (its README says why)
    FrozenCorpus("corpus37", "c76231883cf899d54bd4aebc97e75a2606b8ada5a4e5ff84fbfacf659adc9128",
                 chinese=2, families=20,
                 judged_later=("2026-12-08-i",), beside=I_CHAT),
    FrozenCorpus("corpus38", "714ccb6e5bbb97f500f8f74a8133610a4dec996c1c1e27bec955d921c56c83e0",
                 chinese=4, families=20,
                 judged_later=("2026-12-08-i",), beside=I_CHAT),
    # corpus39: a split of the next measure, built blind from model-definition sources
    FrozenCorpus("corpus39", "b7bc862c76b2786669049380d7d268bebe4292cfa616648321bccb5a5f1bd4ea",
                 chinese=4, families=20,
                 judged_later=("2026-12-08-i",), beside=I_CHAT),
    # corpus40: a split of the measure of 2026-12-08-i, built blind from its own topic area
    # (applied code: GANs, reinforcement learning, input gradients, dtypes, numerics, research code)
    FrozenCorpus("corpus40", "bc327d55b7d51aacdf7c94b1092d4ab4a0f5c6189c1bfc3ca9775914515b63e0",
                 chinese=4, families=20,
                 judged_later=("2026-12-08-i",), beside=I_CHAT),
)
IDS = [s.name for s in SETS]


def earlier_sets(split: FrozenCorpus) -> tuple[str, ...]:
    """Every corpus before ``split`` and the dev sets."""
    before = [s.name for s in SETS[: SETS.index(split)]]
    return (*BEFORE, *before, *DEV_SETS)


@cache
def recorder(name: str) -> Any:
    return load_recorder(name)


def items(split: FrozenCorpus) -> list[Any]:
    return list(recorder(split.name).load_items())


@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_test_yaml_is_the_frozen_file(split: FrozenCorpus) -> None:
    """Any edit of test.yaml after the freezing commit fails here (the split is scored once)."""
    data = (HERE / split.name / "test.yaml").read_bytes()
    assert hashlib.sha256(data).hexdigest() == split.sha256


@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_every_item_is_valid_and_recorded_on_this_torch_line(split: FrozenCorpus) -> None:
    assert_valid_and_recorded(items(split))


@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_the_mix_is_the_one_the_readme_promises(split: FrozenCorpus) -> None:
    """24 to 32 items, 40-60% silent, half or more inside a function or class, enough Chinese
    sources and families, no family above two items."""
    assert_mix(items(split), chinese=split.chinese, families=split.families)


@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_families_new_to_earlier_sets_say_what_they_are(split: FrozenCorpus) -> None:
    corpora = [name for name in earlier_sets(split) if name.startswith("corpus")]
    earlier = ["corpus2/dev.yaml"] + [f"{name}/test.yaml" for name in corpora[1:]]
    assert unexplained_families(items(split), [HERE / path for path in earlier]) == []


@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_sources_are_distinct_and_none_was_used_before(split: FrozenCorpus) -> None:
    """Not in an earlier corpus, the chat material (the question sets, the cards) or a judged
    run from before the split's own scoring."""
    assert_sources_new(items(split), earlier_sets(split),
                       judged_places(ROOT, split.judged_later, split.beside))


@pytest.mark.slow
@pytest.mark.parametrize("split", SETS, ids=IDS)
def test_every_program_reproduces_its_record(split: FrozenCorpus,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """All programs, each in a child of one worker process (the recorder's --check)."""
    status = recorder(split.name).main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    count = len(items(split))
    assert f"{count}/{count} programs reproduce their record" in report
