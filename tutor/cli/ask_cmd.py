"""``tutor ask "QUESTION"``: ask the tutor from the shell (offline unless an LLM is configured)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tutor.cli.common import add_data_dir, add_lang, add_lessons, resolve_lang, said
from tutor.i18n import Lang, T


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", help=said(parser, "ask.question"))
    add_lang(parser, "ask.lang", order="lang.order.question")
    add_lessons(parser)
    parser.add_argument("--step", default=None, metavar="LESSON/STEP",
                        help=said(parser, "ask.step"))
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help=said(parser, "ask.json"))
    parser.add_argument("--offline", action="store_true", help=said(parser, "ask.offline"))


def run(args: argparse.Namespace) -> int:
    from tutor.course import load_course
    from tutor.errors import TutorError

    if not args.question.strip():
        # nothing to answer is a usage error (exit 2), not an answer (exit 0)
        raise TutorError(
            T("the question is empty", "问题是空的"), hint=T(
                'tutor ask "why is x.grad None?"', 'tutor ask "为什么 x.grad 是 None？"'
            )
        )
    course = load_course(getattr(args, "lessons", None))
    lang = answer_lang(args)
    from tutor.chat.snippets import program_to_diagnose, program_to_explain, snippet_to_run

    # "what does this print?" with code pasted, "why is a.grad None?" or "why is my loss not
    # decreasing?" with a program: the tutor runs it in the sandbox (and diagnoses that run)
    wants_run = (
        snippet_to_run(args.question) is not None
        or program_to_explain(args.question) is not None
        or program_to_diagnose(args.question) is not None
    )
    if not args.step and not wants_run:
        from tutor.chat.llm_location import llm_configured

        if args.offline or not llm_configured():
            # most questions are answered by an answer card or a symptom's likely causes: no
            # need to build the Tutor (a symptom's answer as JSON is the Tutor's, with the
            # causes' sources)
            from tutor.chat.quick import quick_answer

            quick = quick_answer(course, args.question, lang, symptoms=not args.json)
            if quick is not None:
                _show_quick(quick, args.question, lang, as_json=args.json)
                return 0
    from tutor.chat import Tutor

    context = None
    store = None
    if args.step:
        try:
            course.find(args.step)
        except KeyError as exc:
            raise TutorError(
                T(
                    f"--step {args.step}: no such lesson step",
                    f"--step {args.step}：没有这个课程步骤",
                ),
                hint=T(
                    "use LESSON/STEP as listed by `tutor lessons`",
                    "请使用 `tutor lessons` 列出的 LESSON/STEP 形式",
                ),
            ) from exc
        from tutor.chat import ChatContext  # with the run models: only a step has a run
        from tutor.progress import ProgressStore

        # hints seen and attempts made persist, so a new `tutor ask` continues from them
        store = ProgressStore.default(args.data_dir)
        lesson_id, _, step_id = args.step.partition("/")
        context = ChatContext(
            lesson_id=lesson_id,
            step_id=step_id,
            hints_unlocked=store.hints_revealed(args.step),
            attempts=store.attempts(args.step),
        )
    runner = None
    if wants_run:
        from tutor.sandbox import Sandbox

        runner = Sandbox(few_runs=True)
    if args.offline:
        tutor = Tutor(course, runner=runner)
    else:
        tutor = Tutor.from_environment(course, runner=runner)
    try:
        answer = _answer(tutor, args.question, lang, context, as_json=args.json)
        if store is not None and context is not None and answer is not None:
            level = answer.hint_level
            if level is not None and level > context.hints_unlocked:
                store.set_hints_revealed(args.step, level)  # the hints pane shows it too
    finally:
        if store is not None:
            store.close()
        if runner is not None:
            runner.close()
    return 0


def answer_lang(args: argparse.Namespace) -> Lang:
    """The answer's language: --lang, else TUTOR_LANG, else the language chosen in the app
    (as the app's Tutor answers), else the question's own (not the locale: a Chinese question
    on an English system is answered in Chinese)."""
    from tutor.chat.tokens import has_cjk

    def questions() -> Lang:
        return "zh" if has_cjk(args.question) else "en"

    return resolve_lang(args, otherwise=questions)


def _show_quick(quick: Any, question: str, lang: str, *, as_json: bool) -> None:
    """An answer card's answer, as the Tutor's answer would be shown."""
    if as_json:
        where = None
        if quick.lesson_title is not None:
            where = {
                "en": f"lesson “{quick.lesson_title}”",
                "zh": f"课程“{quick.lesson_title}”",
            }
        out = {
            "question": question,
            "lang": lang,
            "text": _plain(quick.text),
            "markdown": quick.text,
            "sources": [quick.ref] if quick.ref else [],
            "titled_sources": [{"id": quick.ref, "title": quick.step_title, "where": where}]
            if quick.step_title
            else [],
            "refused": quick.answer_kind == "off_topic",
            "hint_level": None,
            "fallback_notice": None,
            "kind": quick.answer_kind,
            "question_kind": quick.kind,
            "lessons": [quick.ref.partition("/")[0]] if quick.ref else [],
            "redacted": False,
        }
        _print_json(out)
        return
    _write(quick.text)


def _plain(text: str) -> str:
    from tutor.chat.markdown import plain

    return plain(text)


def _print_json(out: dict[str, Any]) -> None:
    try:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _write(text: str) -> None:
    """Markdown rendered by rich on a terminal; plain text into a pipe or file."""
    try:
        if sys.stdout.isatty():
            from rich.console import Console
            from rich.markdown import Markdown

            Console().print(Markdown(text))
        else:
            sys.stdout.write(_plain(text) + "\n")
            sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _answer(tutor: Any, question: str, lang: str, context: Any, *, as_json: bool) -> Any:
    """Print the answer (streamed unless JSON) and return it. A reader that stops early
    (``| head``) only ends the output: the answer still counts."""
    try:
        if as_json:
            answer = tutor.ask(question, lang=lang, context=context)
            dumped = answer.model_dump()
            out = {"question": question, "lang": lang, **dumped, "text": _plain(answer.text)}
            out["markdown"] = answer.text
            print(json.dumps(out, ensure_ascii=False, indent=2))
            return answer
        if sys.stdout.isatty():
            from rich.console import Console
            from rich.live import Live
            from rich.markdown import Markdown

            shown = ""
            with Live(Markdown(""), console=Console(), auto_refresh=False) as live:
                for chunk in tutor.stream(question, lang=lang, context=context):
                    shown += chunk
                    live.update(Markdown(shown), refresh=True)
            return tutor.last_answer
        # into a pipe: plain text, a released piece (whole paragraphs) at a time
        for chunk in tutor.stream(question, lang=lang, context=context):
            sys.stdout.write(_plain(chunk) + ("\n\n" if chunk.endswith("\n\n") else ""))
            sys.stdout.flush()
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # keep Python from complaining again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return tutor.last_answer
