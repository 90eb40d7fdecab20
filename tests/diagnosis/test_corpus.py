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


def expectation(path: Path) -> str:
    found = EXPECT.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name} has no '# expect: ID' header"
    return found.group(1)


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
