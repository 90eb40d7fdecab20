"""``tutor ask "QUESTION"``: ask the tutor from the shell (offline unless an LLM is configured)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask the tutor a question about autograd",
        description=(
            "Answer a question about PyTorch autograd from the course, its glossary and the "
            "error catalog, naming the lesson and step to read. Works offline; if an "
            "OpenAI-compatible endpoint is configured (TUTOR_LLM_BASE_URL, TUTOR_LLM_MODEL, "
            "TUTOR_LLM_API_KEY, or llm.yaml in the user config dir) it is used, with the "
            "offline answer as fallback. The tutor never gives a step's solution: asked for "
            "it, it gives the step's next hint (with --step)."
        ),
    )
    parser.add_argument("question", help="the question, in English or Chinese")
    parser.add_argument(
        "--lang",
        choices=["en", "zh"],
        default=argparse.SUPPRESS,
        help="language of the answer (default: the question's language)",
    )
    parser.add_argument(
        "--lessons",
        type=Path,
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="folder of lesson YAML files (default: the bundled course)",
    )
    parser.add_argument(
        "--step",
        default=None,
        metavar="LESSON/STEP",
        help="the exercise you are on, so hints and guardrails apply to it",
    )
    parser.add_argument(
        "--attempts", type=int, default=0, metavar="N", help="runs of that step so far"
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument(
        "--offline", action="store_true", help="do not use a configured LLM endpoint"
    )


def run(args: argparse.Namespace) -> int:
    from tutor.chat import ChatContext, Tutor, detect_lang
    from tutor.course import load_course
    from tutor.errors import TutorError

    course = load_course(getattr(args, "lessons", None))
    context = None
    if args.step:
        try:
            course.find(args.step)
        except KeyError as exc:
            raise TutorError(
                f"--step {args.step}: no such lesson step ({exc})",
                hint="use LESSON/STEP as listed by `tutor lessons`",
            ) from exc
        lesson_id, _, step_id = args.step.partition("/")
        context = ChatContext(lesson_id=lesson_id, step_id=step_id, attempts=max(args.attempts, 0))
    tutor = Tutor(course) if args.offline else Tutor.from_environment(course)
    lang = getattr(args, "lang", None) or detect_lang(args.question)
    if args.json:
        answer = tutor.ask(args.question, lang=lang, context=context)
        out = {"question": args.question, "lang": lang, **answer.model_dump()}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    for chunk in tutor.stream(args.question, lang=lang, context=context):
        sys.stdout.write(chunk)
        sys.stdout.flush()
    sys.stdout.write("\n")
    return 0
