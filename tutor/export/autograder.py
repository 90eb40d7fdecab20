"""What runs inside a Gradescope or PrairieLearn container for each submission.

``python -m tutor.export.autograder gradescope|prairielearn [--root DIR] [--config FILE]``
grades the files under the submission folder (Gradescope: ``ROOT/submission``, PrairieLearn:
``ROOT/student``) against the exercises of the bundle's config, through the same sandbox as
``tutor grade``, and writes ``ROOT/results/results.json``. Whatever happens, a results file is
written (a grader that dies would leave the student a blank page): a failure of grading itself
scores zero with the reason on Gradescope and is "not gradable" (no attempt lost) on
PrairieLearn. ``--warm`` computes the exercises' truth once, at image build time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import Lang

if TYPE_CHECKING:
    from tutor.grading.reports import SubmissionEntry

Platform = Literal["gradescope", "prairielearn"]
CONFIG_NAME = "tutor-autograder.json"
DEFAULT_ROOT: dict[str, Path] = {"gradescope": Path("/autograder"), "prairielearn": Path("/grade")}
SUBMISSION_DIR = {"gradescope": "submission", "prairielearn": "student"}


class AutograderConfig(BaseModel):
    """The bundle's ``tutor-autograder.json``."""

    model_config = ConfigDict(extra="forbid")

    platform: Platform
    exercises: list[str] = Field(min_length=1, description="LESSON/STEP refs, in order.")
    lang: Lang = "en"
    timeout_s: float = Field(10.0, gt=0)
    lessons: str | None = Field(
        None, description="Lesson folder relative to this file; None: the bundled course.")
    visibility: Literal["hidden", "after_due_date", "after_published", "visible"] = "visible"


def config_path(platform: Platform, root: Path) -> Path:
    if platform == "gradescope":
        return root / "source" / CONFIG_NAME
    return root / "serverFilesCourse" / "autograd_tutor" / CONFIG_NAME


def load_config(path: Path) -> AutograderConfig:
    return AutograderConfig.model_validate_json(path.read_bytes())


def _lessons_dir(config: AutograderConfig, config_file: Path) -> Path | None:
    return (config_file.parent / config.lessons).resolve() if config.lessons else None


def expected_names(lesson_id: str, step_id: str) -> list[str]:
    """The file names a submission of LESSON/STEP may have, as ``tutor grade`` accepts them."""
    return [f"{step_id}.py", f"{lesson_id}--{step_id}.py", f"{lesson_id}/{step_id}.py"]


def _find_file(folder: Path, names: Sequence[str], only_one: bool) -> Path | None:
    files = sorted(p for p in folder.rglob("*.py") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    for name in names:
        for path in files:
            if path.relative_to(folder).as_posix().endswith(name) and (
                    "/" in name or path.name == name):
                return path
    # one exercise and one file: whatever the student called it
    return files[0] if only_one and len(files) == 1 else None


def every_check(entry: SubmissionEntry,
                checks: Sequence[tuple[str, str, float]]) -> SubmissionEntry:
    """The entry with every check of its exercise listed, so its tests add up to its maximum
    on the platform: a refused submission (integrity) carries one test worth nothing, and
    each check it never reached is listed at 0 with the refusal's reason."""
    from tutor.grading.reports import TestEntry

    if sum(t.max_score for t in entry.tests) >= entry.max_score:
        return entry
    have = {t.name for t in entry.tests}
    extra = [TestEntry(name=name, label=label, status="error", score=0.0, max_score=points,
                       message=entry.message) for name, label, points in checks
             if name not in have]
    return entry.model_copy(update={"tests": [*entry.tests, *extra]})


def grade_folder(
    platform: Platform, root: Path, config_file: Path
) -> tuple[BaseModel, AutograderConfig]:
    """Grade ``root``'s submission against the config; the platform's results model."""
    from tutor.course import load_course
    from tutor.course.models import CodeStep, FixStep
    from tutor.export.platforms import Missing, gradescope_results, prairielearn_results
    from tutor.grading.batch import grade_submissions, read_submission
    from tutor.grading.checks import check_label, check_name
    from tutor.grading.expected import ExpectedCache
    from tutor.paths import private_folders
    from tutor.sandbox import Limits, Sandbox

    started = time.monotonic()
    config = load_config(config_file)
    lessons = _lessons_dir(config, config_file)
    course = load_course(lessons)
    steps = {f"{lesson.id}/{step.id}": (lesson, step)
             for lesson in course.lessons for step in lesson.steps}
    folder = root / SUBMISSION_DIR[platform]
    submissions, missing = [], []
    for ref in config.exercises:
        lesson, step = steps[ref]
        assert isinstance(step, (CodeStep, FixStep)), f"{ref} is not a code or fix step"
        names = expected_names(lesson.id, step.id)
        path = _find_file(folder, names, only_one=len(config.exercises) == 1) if folder.is_dir() \
            else None
        if path is None:
            missing.append(Missing(ref, names[:2], [(check_label(c).get(config.lang), c.points)
                                                    for c in step.checks]))
            continue
        submissions.append(read_submission(path, path.relative_to(folder).as_posix(),
                                           "student", lesson, step))
    # the runs see the bundle (solutions), the caches and this very folder as empty
    hide = private_folders(lessons, also=[root.resolve()])
    with Sandbox(hide=hide) as sandbox:
        sandbox.start()
        entries = grade_submissions(
            submissions, runner=sandbox, device="cpu", cache=ExpectedCache(),
            limits=Limits(wall_time_s=config.timeout_s), lang=config.lang,
        )
    labels = {s.exercise: [(check_name(c), check_label(c).get(config.lang), c.points)
                           for c in s.step.checks]
              for s in submissions if isinstance(s.step, (CodeStep, FixStep))}  # (as exported)
    entries = [every_check(entry, labels[entry.exercise]) for entry in entries]
    if platform == "gradescope":
        return gradescope_results(entries, missing, lang=config.lang,
                                  visibility=config.visibility,
                                  execution_time=round(time.monotonic() - started, 3)), config
    return prairielearn_results(entries, missing, lang=config.lang), config


def warm(config_file: Path) -> None:
    """Run every exercise's reference solution once, so each submission finds its truth."""
    from tutor.course import load_course
    from tutor.course.models import CodeStep, FixStep
    from tutor.grading import expected_run
    from tutor.grading.expected import ExpectedCache
    from tutor.sandbox import Sandbox

    config = load_config(config_file)
    course = load_course(_lessons_dir(config, config_file))
    steps = {f"{lesson.id}/{step.id}": step for lesson in course.lessons for step in lesson.steps}
    with Sandbox() as sandbox:
        sandbox.start()
        for ref in config.exercises:
            step = steps[ref]
            if isinstance(step, (CodeStep, FixStep)):  # (the export took only these)
                expected_run(step, runner=sandbox, device="cpu", cache=ExpectedCache())


def write_results(root: Path, results: BaseModel) -> Path:
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    tmp = out / ".results.json.tmp"
    tmp.write_text(results.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    from tutor.export.platforms import gradescope_failure, prairielearn_failure

    parser = argparse.ArgumentParser(prog="python -m tutor.export.autograder")
    parser.add_argument("platform", choices=["gradescope", "prairielearn"])
    parser.add_argument("--root", type=Path, default=None,
                        help="the container's folder (default: /autograder or /grade)")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--warm", action="store_true",
                        help="compute the exercises' truth (at image build time) and exit")
    args = parser.parse_args(argv)
    platform: Platform = args.platform
    root: Path = args.root or DEFAULT_ROOT[platform]
    config_file: Path = args.config or config_path(platform, root)
    if args.warm:
        warm(config_file)
        return 0
    lang: Lang = "en"
    try:
        lang = json.loads(config_file.read_text(encoding="utf-8")).get("lang", "en")
        results, _ = grade_folder(platform, root, config_file)
    except Exception as error:  # the student must get a results file, whatever broke
        reason = f"{type(error).__name__}: {error}"[:500]
        print(f"autograder: {reason}", file=sys.stderr)
        results = (gradescope_failure(reason, lang=lang) if platform == "gradescope"
                   else prairielearn_failure(reason, lang=lang))
        write_results(root, results)
        return 1
    write_results(root, results)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
