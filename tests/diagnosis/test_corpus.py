"""Every program in ``corpus/`` runs in the real sandbox and must get exactly the diagnosis
its header names: ``# expect: ID`` (the first diagnosis), ``none`` or ``generic``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor.diagnosis import explain, load_catalog
from tutor.sandbox import Sandbox

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(CORPUS.glob("*.py"))
EXPECT = re.compile(r"^# expect: ([a-z0-9-]+)\s*$", re.MULTILINE)
# torch's own spellings of a shape; the tutor writes every shape as (3,) or (2, 3). The
# interval [0, 1] (BCE's probabilities) is the one bracketed list that is not a shape.
TORCH_SHAPE = re.compile(r"torch\.Size|(?!\[0, 1\])\[-?\d+(?:, ?-?\d+)*\]|\b\d+ ?x ?\d+\b")
CODE_SPAN = re.compile(r"`[^`]*`")


def torch_shape_spelling(text: str) -> str | None:
    """The first shape written torch's way outside code spans (code may index: x[0])."""
    found = TORCH_SHAPE.search(CODE_SPAN.sub("", text))
    return found.group(0) if found else None


def expectation(path: Path) -> str:
    found = EXPECT.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name} has no '# expect: ID' header"
    return found.group(1)


def test_torch_shape_spellings_are_recognised() -> None:
    for torch_way in ("shape [3]", "torch.Size([2, 3])", "a 4x5 matrix", "size 2 x 2"):
        assert torch_shape_spelling(torch_way), torch_way
    for ours in ("shape (3,)", "(2, 3) times (3, 2)", "`x[0, 1]` is a number", "outside [0, 1]"):
        assert torch_shape_spelling(ours) is None, ours


def test_corpus_is_big_and_varied() -> None:
    expected = [expectation(p) for p in CASES]
    buggy = [e for e in expected if e not in ("none", "generic")]
    assert len(buggy) >= 40
    assert expected.count("none") >= 5
    assert expected.count("generic") >= 3
    assert len(set(buggy)) >= 30
    ids = {e.id for e in load_catalog().entries}
    assert set(buggy) <= ids, sorted(set(buggy) - ids)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_corpus_program(path: Path, sandbox: Sandbox) -> None:
    code = path.read_text(encoding="utf-8")
    expected = expectation(path)
    result = sandbox.run(code)
    diagnoses = explain(result, code)
    got = [(d.id, d.line) for d in diagnoses]
    for diagnosis in diagnoses:
        for text in (diagnosis.title, diagnosis.explanation, diagnosis.fix, diagnosis.details):
            for lang_text in (text.en, text.zh) if text is not None else ():
                assert torch_shape_spelling(lang_text) is None, (diagnosis.id, lang_text)
    if expected == "none":
        assert result.ok, result.error
        assert diagnoses == [], got
        return
    assert diagnoses, f"no diagnosis; outcome={result.outcome} error={result.error}"
    first = diagnoses[0]
    if expected == "generic":
        assert first.generic, got
        assert first.line == (result.error.line if result.error else None)
        return
    assert not first.generic, f"generic for {result.error}"
    assert first.id == expected, got
    # specific diagnoses speak in the learner's terms: no unfilled placeholder survives
    for text in (first.title, first.explanation, first.fix):
        for lang_text in (text.en, text.zh):
            assert not re.search(r"\{[a-z_0-9]+\}", lang_text), lang_text
