"""``tutor diagnose``: show the diagnosis catalog, or run a file and explain what went wrong
(the error, the warnings and the silent pitfalls), in the chosen language."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tutor.cli.common import add_device, add_lang, add_timeout, wall_time
from tutor.errors import TutorError
from tutor.i18n import T

STATUS = {
    "clean": T("No problems found.", "没有发现问题。"),
    "error_line": T("{type} on line {line}: {message}", "第 {line} 行出现 {type}：{message}"),
    "error": T("{type}: {message}", "{type}：{message}"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diagnose",
        help="explain the errors and pitfalls in a file, or list the diagnosis catalog",
        description="Run FILE in the sandbox and explain its error, warnings and silent "
        "autograd pitfalls in plain language; with --list, show every diagnosis the tutor knows.",
    )
    parser.add_argument("file", type=Path, nargs="?", metavar="FILE",
                        help="the Python file to diagnose")
    parser.add_argument("--list", action="store_true", help="show the diagnosis catalog")
    parser.add_argument("--static", action="store_true",
                        help="do not run FILE: only look for silent pitfalls in its source")
    parser.add_argument("--json", action="store_true", help="print the diagnoses as JSON")
    add_device(parser)
    add_timeout(parser)
    add_lang(parser)


def _require_syntax(path: Path, code: str) -> None:
    """A static check needs a syntax tree: say where the code cannot be parsed."""
    import ast

    try:
        ast.parse(code, filename=str(path))
    except SyntaxError as exc:
        raise TutorError(
            f"{path}:{exc.lineno}: cannot be parsed ({exc.msg})",
            hint="fix the syntax, or run without --static to see the error explained",
        ) from exc


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tutor.cli import diagnosis_view
    from tutor.cli.common import read_source, resolve_lang
    from tutor.diagnosis import explain, find_pitfalls, load_catalog

    lang = resolve_lang(args)
    console = Console(soft_wrap=False)
    if args.list:
        if args.file is not None:
            raise TutorError("give either FILE or --list, not both")
        catalog = load_catalog()
        if args.json:
            sys.stdout.write(json.dumps(catalog.model_dump(mode="json"), ensure_ascii=False,
                                        indent=2) + "\n")
        else:
            console.print(diagnosis_view.catalog_table(catalog, lang))  # type: ignore[arg-type]
        return 0
    if args.file is None:
        raise TutorError("nothing to diagnose", hint="give a FILE, or --list for the catalog")
    code = read_source(args.file, lang)
    status = 0
    if args.static:
        _require_syntax(args.file, code)
        diagnoses = find_pitfalls(code)
        header = None
    else:
        from tutor.paths import private_folders
        from tutor.sandbox import DeviceError, Limits, Sandbox

        wall_time(args)
        device = getattr(args, "device", None) or "auto"
        with Sandbox(hide=private_folders(None), few_runs=True) as sandbox:
            try:
                result = sandbox.run(code, device=device, limits=Limits(wall_time_s=args.timeout))
            except DeviceError as exc:
                raise TutorError(exc.text.get(lang)) from exc  # type: ignore[arg-type]
        diagnoses = explain(result, code)
        header = None
        if result.outcome not in ("ok", "error"):
            # a stopped run: the sandbox's reason is English, so say it in the learner's words
            from tutor.cli.run_cmd import OUTCOME_TEXT

            text = OUTCOME_TEXT.get(result.outcome)
            if text is not None:
                header = text.format(timeout=args.timeout, signal=result.signal,
                                     code=result.exit_code).get(lang)  # type: ignore[arg-type]
        elif result.error is not None:
            first = result.error.message.strip().splitlines()[0] if result.error.message else ""
            key = "error_line" if result.error.line else "error"
            header = STATUS[key].format(type=result.error.type, line=result.error.line,
                                        message=first).get(lang)  # type: ignore[arg-type]
        status = 0 if result.ok else 1
    if args.json:
        payload = [d.model_dump(mode="json") for d in diagnoses]
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return status
    # a console gets panels; a pipe or file gets plain lines that rich does not re-wrap
    blocks: list[str] = [header] if header else []
    if not diagnoses:
        blocks.append(STATUS["clean"].get(lang))  # type: ignore[arg-type]
    if console.is_terminal:
        for block in blocks:
            console.print(block, markup=False, highlight=False)
        for diagnosis in diagnoses:
            console.print(diagnosis_view.diagnosis_panel(diagnosis, lang))  # type: ignore[arg-type]
    else:
        blocks.extend(diagnosis_view.format_diagnosis(d, lang) for d in diagnoses)  # type: ignore[arg-type]
        sys.stdout.write("\n\n".join(blocks) + "\n")
    return status
