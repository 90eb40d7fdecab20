"""``tutor diagnose``: show the diagnosis catalog, or run a file and explain what went wrong
(the error, the warnings and the silent pitfalls), in the chosen language."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tutor import syntax_tree
from tutor.cli.common import add_device, add_lang, add_timeout, said, wall_time
from tutor.cli.messages import msg
from tutor.errors import TutorError
from tutor.i18n import Lang, T, Text

if TYPE_CHECKING:
    from tutor.sandbox.models import ErrorInfo


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, nargs="?", metavar="FILE",
                        help=said(parser, "diagnose.file"))
    parser.add_argument("--list", action="store_true", help=said(parser, "diagnose.list"))
    parser.add_argument("--static", action="store_true", help=said(parser, "diagnose.static"))
    parser.add_argument("--json", action="store_true", help=said(parser, "diagnose.json"))
    add_device(parser)
    add_timeout(parser)
    add_lang(parser)


def _syntax_error(code: str) -> ErrorInfo | None:
    """What the sandbox would report for code Python cannot parse (None: it parses). A static
    check needs a syntax tree, and a learner's syntax error is their code failing, not a
    usage error: it is explained and exits 1, as a run would."""

    from tutor.sandbox.models import ErrorInfo

    try:
        syntax_tree.parse(code)
    except SyntaxError as exc:
        lines = code.splitlines()
        source = lines[exc.lineno - 1].strip() if exc.lineno and exc.lineno <= len(lines) else None
        return ErrorInfo.model_validate({"type": type(exc).__name__, "message": exc.msg,
                                         "line": exc.lineno, "source_line": source})
    return None


def _error_header(error: ErrorInfo, lang: Lang) -> str:
    """``RuntimeError on line 4: <the message's first line>``."""
    from tutor.diagnosis.messages import for_learner  # torch's build notes are not for learners

    message = for_learner(error.message).strip()
    first = message.splitlines()[0] if message else ""
    key = "error_line" if error.line else "error"
    return msg(f"diagnose.{key}", type=error.type, line=error.line, message=first).get(lang)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tutor.cli import diagnosis_view
    from tutor.cli.common import read_source, resolve_lang
    from tutor.diagnosis import explain, find_pitfalls, load_catalog
    from tutor.tui.cjk_wrap import Wrapped  # Chinese breaks between characters

    lang = resolve_lang(args)
    console = Console(soft_wrap=False)
    if args.list:
        if args.file is not None:
            raise TutorError(T("give either FILE or --list, not both",
                               "FILE 和 --list 只能给一个，不能同时给"))
        catalog = load_catalog()
        if args.json:
            sys.stdout.write(json.dumps(catalog.model_dump(mode="json"), ensure_ascii=False,
                                        indent=2) + "\n")
        else:
            console.print(diagnosis_view.catalog_table(catalog, lang))
        return 0
    if args.file is None:
        raise TutorError(T("nothing to diagnose", "没有要诊断的内容"),
                         hint=T("give a FILE, or --list for the catalog",
                                "请给出一个 FILE，或用 --list 查看诊断目录"))
    code = read_source(args.file, lang)
    status = 0
    header = None
    shows: list[Text] = []
    syntax_error = _syntax_error(code) if args.static else None
    if syntax_error is not None:
        from tutor.sandbox.models import RunResult

        # nothing ran (device is only required by the model): the run's explanation, as is
        diagnoses = explain(RunResult.model_validate(
            {"outcome": "error", "device": "cpu", "error": syntax_error}), code)
        header = _error_header(syntax_error, lang)
        status = 1
    elif args.static:
        diagnoses = find_pitfalls(code)
    else:
        from tutor.paths import private_folders
        from tutor.sandbox import DeviceError, Limits, Sandbox

        wall_time(args)
        device = getattr(args, "device", None) or "auto"
        from tutor.diagnosis.reasoning import diagnose_with_evidence
        from tutor.diagnosis.run_summary import run_summary

        with Sandbox(hide=private_folders(None), few_runs=True) as sandbox:
            try:
                result = sandbox.run(code, device=device, limits=Limits.model_validate(
                    {"wall_time_s": args.timeout}))
                # asked to diagnose: the run is repeated with instrumentation, so a program
                # that runs but learns wrong (a silent bug) is explained too
                diagnoses, evidence = diagnose_with_evidence(code, result, sandbox,
                                                             device=device)
                shows = run_summary(evidence) if evidence is not None and not diagnoses \
                    else []
            except DeviceError as exc:
                raise TutorError(exc.text.get(lang)) from exc
        if result.outcome not in ("ok", "error"):
            # a stopped run: the sandbox's reason is English, so say it in the learner's words
            key = f"run.outcome.{result.outcome}"
            if key in msg:
                header = msg(key, timeout=args.timeout, signal=result.signal,
                             code=result.exit_code).get(lang)
        elif result.error is not None:
            header = _error_header(result.error, lang)
        status = 0 if result.ok else 1
    if args.json:
        payload = [d.model_dump(mode="json") for d in diagnoses]
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return status
    # a console gets panels; a pipe or file gets plain lines that rich does not re-wrap
    blocks: list[str] = [header] if header else []
    if not diagnoses:
        blocks.append(msg("diagnose.clean").get(lang))
        if shows:  # what the run shows, not a clean bill
            blocks.append("\n".join([msg("diagnose.shows").get(lang),
                                      *(f"  - {line.get(lang)}" for line in shows)]))
    if console.is_terminal:
        for block in blocks:
            console.print(Wrapped(block), highlight=False)
        for diagnosis in diagnoses:
            console.print(diagnosis_view.diagnosis_panel(diagnosis, lang))
    else:
        blocks.extend(diagnosis_view.format_diagnosis(d, lang) for d in diagnoses)
        sys.stdout.write("\n\n".join(blocks) + "\n")
    return status
