"""The submissions corpus: each file graded against the seed lesson gives its expected verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tutor.course.models import CodeStep, Lesson
from tutor.grading import ExpectedCache, Verdict, grade_step
from tutor.sandbox import Limits, Sandbox

HERE = Path(__file__).resolve().parent
SUBMISSIONS = HERE / "submissions"
EXPECTED: dict[str, dict[str, Any]] = dict(
    YAML(typ="safe").load((HERE / "corpus_expected.yaml").read_text(encoding="utf-8"))
)
LIMITS = Limits(wall_time_s=3.0)
NEVER_ENDS = {"fay/mm.py", "fay/nonscalar.py", "gus/square.py"}
SHORT_LIMITS = Limits(wall_time_s=1.0)
"""For the programs that never end: the same verdict (did not finish in time), 2 s sooner."""


def feedback(verdict: Verdict) -> str:
    texts = [verdict.message.en] if verdict.message else []
    texts += [check.message.en for check in verdict.checks]
    return "\n".join(texts)


def grade_file(lesson: Lesson, rel: str, runner: Sandbox, cache: ExpectedCache) -> Verdict:
    step = lesson.step(Path(rel).stem)
    assert isinstance(step, CodeStep)
    code = (SUBMISSIONS / rel).read_text(encoding="utf-8")
    limits = SHORT_LIMITS if rel in NEVER_ENDS else LIMITS
    return grade_step(lesson, step, code, runner=runner, cache=cache, limits=limits)


def test_every_corpus_file_has_an_expectation() -> None:
    files = sorted(str(p.relative_to(SUBMISSIONS)) for p in SUBMISSIONS.rglob("*.py"))
    assert files == sorted(EXPECTED)
    timed_out = {rel for rel, want in EXPECTED.items()
                 if want.get("says") == "did not finish in time"}
    assert timed_out == NEVER_ENDS


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_corpus_verdict(
    rel: str, seed_lesson: Lesson, sandbox: Sandbox, shared_cache: ExpectedCache
) -> None:
    want = EXPECTED[rel]
    verdict = grade_file(seed_lesson, rel, sandbox, shared_cache)
    text = feedback(verdict)
    assert (verdict.status, verdict.score) == (want["status"], want["score"]), text
    assert verdict.max_score == {"nonscalar": 5, "mm": 5, "square": 3}[Path(rel).stem]
    if "says" in want:
        assert want["says"] in text
    # every learner-facing message exists in both languages
    for check in verdict.checks:
        assert check.message.en and check.message.zh and check.label.zh


@pytest.mark.parametrize("rel", ["ana/nonscalar.py", "chen/mm.py", "dara/nonscalar.py",
                                 "eli/nonscalar.py", "hana/mm.py", "chen/square.py"])
def test_same_verdict_twice(
    rel: str, seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    first = grade_file(seed_lesson, rel, sandbox, ExpectedCache(tmp_path))
    # the second time the truth comes from the disk cache, and a fresh run of the submission
    second = grade_file(seed_lesson, rel, sandbox, ExpectedCache(tmp_path))
    assert first.model_dump(exclude={"run"}) == second.model_dump(exclude={"run"})
