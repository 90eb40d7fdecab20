"""``tutor run FILE``: run a file the way a learner would, then explain what went wrong."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.cli.common import add_device, add_lang, add_timeout, said, wall_time
from tutor.cli.messages import msg
from tutor.errors import TutorError

if TYPE_CHECKING:
    from tutor.diagnosis.models import Diagnosis
    from tutor.i18n import Lang
    from tutor.sandbox.models import ErrorInfo, RunResult

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help=said(parser, "run.file"))
    add_device(parser)
    add_timeout(parser)
    parser.add_argument("--json", action="store_true", help=said(parser, "run.json"))
    parser.add_argument("--diagnose", action="store_true", help=said(parser, "run.diagnose"))
    add_lang(parser)


def _diagnoses(result: RunResult, code: str) -> list[Diagnosis]:
    try:
        from tutor.diagnosis import explain
    except ImportError:  # the diagnosis layer is optional for a plain run
        return []
    return list(explain(result, code))


def _diagnoses_from_evidence(result: RunResult, code: str, sandbox: Any, device: str
                             ) -> tuple[list[Diagnosis], Any]:
    """Diagnoses reasoned from an instrumented re-run (and the fixes tried), with its evidence."""
    try:
        from tutor.diagnosis.reasoning import diagnose_with_evidence
    except ImportError:
        return [], None
    return diagnose_with_evidence(code, result, sandbox, device=device)


def _print_result(result: RunResult, diagnoses: list[Diagnosis], lang: Lang,
                  timeout: float = 10.0, *, streamed: bool = False, code: str = "") -> None:
    """``streamed``: the output was shown as it came; only what follows it is printed.
    ``code``: what ran (its names are what a mistyped name most likely meant)."""
    out, err = sys.stdout, sys.stderr
    if streamed:
        if (result.stdout or result.stderr) and not (result.stdout + result.stderr).endswith(
                "\n"):
            out.write("\n")
    else:
        if result.stdout:
            out.write(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
        if result.stderr:
            err.write(result.stderr if result.stderr.endswith("\n") else result.stderr + "\n")
    out.flush()
    from tutor.diagnosis.messages import for_learner  # torch's build notes are not for learners

    lines: list[str] = []
    for warning in result.warnings:
        key = "warning" if warning.line is not None else "warning_noline"
        lines.append(msg(f"run.{key}", line=warning.line, category=warning.category,
                         message=for_learner(warning.message)).get(lang))
    error = result.error
    if result.outcome == "error" and error is not None:
        lines += _where(error, lang)
        lines.append(f"{error.type}: {for_learner(error.message)}")
        from tutor.learning.did_you_mean import did_you_mean

        meant = did_you_mean(error, code)
        if meant is not None:
            lines.append(meant.get(lang))
    elif f"run.outcome.{result.outcome}" in msg:
        if error is not None:  # a run stopped at a limit: where it was
            lines += _where(error, lang)
        lines.append(msg(f"run.outcome.{result.outcome}", timeout=timeout,
                         signal=result.signal, code=result.exit_code).get(lang))
    # the same block as `tutor diagnose` prints: translated kind, the values, the lesson
    from tutor.cli.diagnosis_view import format_diagnosis

    for diagnosis in diagnoses:
        lines.append("")
        lines.append(format_diagnosis(diagnosis, lang))
    if lines:
        err.write("\n".join(lines) + "\n")


def _where(error: ErrorInfo, lang: Lang) -> list[str]:
    """The learner's frames of an error (or of a run stopped at a limit), as Python's
    traceback shows them but with the learner's lines only."""
    if error.traceback:
        lines = [msg("run.traceback").get(lang)]
        for frame in error.traceback:
            lines.append(msg("run.line", line=frame.line, function=frame.function).get(lang))
            if frame.source:
                lines.append(f"    {frame.source}")
        return lines
    if error.line is not None:
        return [msg("run.error_at", line=error.line, source=error.source_line or "").get(lang)]
    return []


def exit_status(result: RunResult) -> int:
    """0 when the code ran without error (sys.exit(0) included), 1 otherwise."""
    if result.outcome == "ok" or (result.outcome == "exited" and result.exit_code == 0):
        return 0
    return 1


def _terminal_echo() -> Callable[[str], None] | None:
    """On a terminal, the run's output is shown as it comes (a long loop's prints too),
    both streams on the screen as they arrive; piped, they stay apart and come at the end."""
    if not sys.stdout.isatty():
        return None

    def echo(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    return echo


def run(args: argparse.Namespace) -> int:
    from tutor.cli.common import read_source, resolve_lang
    from tutor.paths import private_folders
    from tutor.sandbox import DeviceError, Limits, Sandbox

    lang = resolve_lang(args)
    code = read_source(args.file, lang)
    wall_time(args)
    device = getattr(args, "device", None) or "auto"
    evidence = None
    echo = None if args.json else _terminal_echo()
    with Sandbox(hide=private_folders(None), few_runs=True) as sandbox:
        try:
            result = sandbox.run(code, device=device, limits=Limits(wall_time_s=args.timeout),
                                 on_output=echo)
        except DeviceError as exc:
            raise TutorError(exc.text.get(lang)) from exc
        if result.outcome == "error" or getattr(args, "diagnose", False):
            diagnoses, evidence = _diagnoses_from_evidence(result, code, sandbox,
                                                           result.device)
        else:
            diagnoses = _diagnoses(result, code)
        confinement = sandbox.confinement()
    if not confinement.confined:
        sys.stderr.write(msg("run.unconfined", reason=confinement.reason).get(lang) + "\n")
    if args.json:
        payload: dict[str, Any] = {
            "result": result.model_dump(mode="json"),
            "diagnoses": [d.model_dump(mode="json") for d in diagnoses],
            "root_line": diagnoses[0].root_line if diagnoses else None,
            "evidence": evidence.model_dump(mode="json") if evidence is not None else None,
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    else:
        _print_result(result, diagnoses, lang, args.timeout, streamed=echo is not None,
                      code=code)
    return exit_status(result)
