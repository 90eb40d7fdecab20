"""Lint lesson files: every problem in one pass, each at ``path:line:col``.

Static checks (no torch): YAML syntax, the lesson schema (unknown keys with a did-you-mean,
wrong types, missing translations), duplicate lesson and step ids, prose given as a plain
string where a translation is expected, checks naming variables the solution never defines,
Python syntax errors in solutions, quizzes without a right answer, checks that cannot fail.

Severity: an exercise (``code``/``fix`` step) with fewer than two hints is a *warning*, not
an error — the lesson works, but the hint ladder (gentle, then specific) is incomplete.
Warnings are printed and do not change the exit status unless ``strict``.

Dynamic checks (reference solutions run in the sandbox) are done by a ``verify`` callable
with the signature of ``tutor.grading.selfcheck.verify_lesson``; this module only maps what
it reports to file positions, so the course layer stays free of torch and grading.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tutor import syntax_tree
from tutor.cjk import UNSPACED
from tutor.course.cheats import forbidden_without_cheat
from tutor.course.loader import (
    LoadedLesson,
    Loc,
    Problem,
    did_you_mean_text,
    duplicate_lesson_problem,
    duplicate_step_problems,
    lesson_files,
    load_lesson_with_positions,
)
from tutor.course.messages import msg
from tutor.course.models import (
    AnswerStep,
    AstCheck,
    AttributeCheck,
    CodeStep,
    ErrorCheck,
    FixStep,
    FunctionCheck,
    Lesson,
    QuizStep,
    StdoutCheck,
    ValueCheck,
)
from tutor.errors import TutorError
from tutor.i18n import Lang, T, Text, counted
from tutor.markdown_fences import fenced_pieces
from tutor.python_names import BUILTIN_NAMES, defined_names, free_names, parses

MIN_HINTS = 2
LANGS: tuple[Lang, ...] = ("en", "zh")
"""Exercises should offer a gentle hint and a specific one."""

_CJK = re.compile(f"[{UNSPACED}]")
_CODE_SPAN = re.compile(r"```.*?```|`[^`]*`|^\s*[\"'].*[\"']\s*$", re.S)
"""Code spans, and a text that is wholly one quotation (an error message, verbatim)."""
_WORD = re.compile(r"^[(\"']?[A-Za-z]{2,}[,.;:!?)\"']*$")
PROSE_WORDS = 3
"""A plain string with this many English words (outside `code`) is prose that needs a
Chinese translation; fewer is taken as a name or formula, the same in both languages."""

_TEXT_FIELDS_OF_STEP = ("title", "body", "prompt")

_INLINE_CODE = re.compile(r"(`+).+?\1", re.S)
_FORMULA_STAR = re.compile(r"(?<=[A-Za-z0-9\])])\*{1,2}(?=[A-Za-z0-9(\[])")
"""A ``*`` between two letters or digits (``2*x``, ``x**2``, ``1*z[0]``): Markdown reads a pair
of them as emphasis and drops both; ``**bold**`` has a space or punctuation on its outer sides
(or CJK text, where ``**加**`` is meant as emphasis)."""
_EDGE_UNDERSCORE = re.compile(r"(?<![\w`])_{1,2}[A-Za-z0-9]\w*?_{1,2}(?![\w`])")
"""``__init__`` or ``_x_`` outside code: an underscore at a word's edge opens emphasis (an
underscore inside a word, as in requires_grad, does not)."""
_BY_POSITION = re.compile(
    r"\b(all|none|both|either|neither) of (the )?(above|these|others|them)\b"
    r"|\b(the )?(above|previous|next|following|first|second|third|fourth|last|other) "
    r"(choice|option|answer|statement)s?\b|\b(choice|option) [A-Ha-h1-9]\b"
    r"|以上(都|皆|全|均)|(上面|下面|前面|后面|其他|其余)的?(选项|说法|答案)"
    r"|选项 ?[A-Ha-h1-9]|第[一二三四五六七八]个?(选项|说法|答案)",
    re.I,
)
"""Words that point at a choice by its place, which the per-learner shuffle changes."""
_COUNT_WORDS = re.compile(
    r"\b(one|two|three|four|both|all|none|several)\b[^.?!]*\b(correct|right|true)\b"
    r"|[一两二三四几]个(选项|说法|陈述|答案)[^。？！]*(正确|对)|(选项|说法)都(正确|对)",
    re.I,
)


class SelfCheckProblemLike(Protocol):
    """What ``tutor.grading.selfcheck.verify_lesson`` reports for one step (read only: its
    problems are frozen models)."""

    @property
    def step_id(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def message(self) -> str: ...


VerifyLesson = Callable[..., Sequence[SelfCheckProblemLike]]


@dataclass
class LintReport:
    """Everything ``tutor lint`` found, sorted by path and line."""

    files: list[Path] = field(default_factory=list)
    loaded: list[LoadedLesson] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def lessons(self) -> int:
        return sum(1 for item in self.loaded if item.lesson is not None)

    @property
    def steps(self) -> int:
        return sum(len(item.lesson.steps) for item in self.loaded if item.lesson is not None)

    def failed(self, *, strict: bool = False) -> bool:
        return bool(self.errors or (strict and self.warnings))

    def summary(self, lang: Lang = "en") -> str:
        """The last line of ``tutor lint``, in ``lang``."""
        lessons, steps = counted(self.lessons, "lesson"), counted(self.steps, "step")
        warnings = counted(len(self.warnings), "warning")
        files = counted(len({p.path for p in self.problems}), "file")
        if not self.problems:
            return msg("summary.clean", lessons=lessons, steps=steps).get(lang)
        if not self.errors:
            return msg("summary.warnings_only", lessons=lessons, steps=steps,
                       warnings=warnings, files=files).get(lang)
        detail = msg("summary.problems_warnings", warnings=warnings) if self.warnings else ""
        return msg("summary.problems", problems=counted(len(self.problems), "problem"),
                   warnings=detail, files=files).get(lang)


# --------------------------------------------------------------------------- entry points


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Lesson files named by ``paths``: files as given, folders' ``*.yaml`` in name order."""
    out: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = lesson_files(path)
            if not found:  # "0 lessons: all clean" would pass a typo'd folder in CI
                raise TutorError(
                    T(f"{path}: no lesson files (*.yaml) in this folder",
                      f"{path}：这个文件夹中没有课程文件（*.yaml）"),
                    hint=T("pass a folder that holds lesson *.yaml files",
                           "请给出包含课程 *.yaml 文件的文件夹"),
                )
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise TutorError(
                T(f"{path}: no such file or folder", f"{path}：文件或文件夹不存在"),
                hint=T("pass lesson files or folders", "请给出课程文件或文件夹"),
            )
    seen: set[Path] = set()
    unique = []
    for path in out:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def lint_paths(
    paths: Iterable[Path],
    *,
    verify: VerifyLesson | None = None,
    runner: Any = None,
    device: str = "cpu",
    on_lesson: Callable[[LoadedLesson], None] | None = None,
) -> LintReport:
    """Lint every lesson file under ``paths``. With ``verify`` (and its ``runner``), each
    valid lesson's reference solutions are also checked by running them."""
    report = LintReport(files=collect_files(paths))
    first_seen: dict[str, LoadedLesson] = {}
    for path in report.files:
        loaded = load_lesson_with_positions(path)
        report.loaded.append(loaded)
        report.problems.extend(loaded.problems)
        if loaded.lesson is None:
            continue
        other = first_seen.get(loaded.lesson.id)
        if other is not None:
            report.problems.append(duplicate_lesson_problem(loaded, other))
        else:
            first_seen[loaded.lesson.id] = loaded
        static = static_problems(loaded)
        report.problems.extend(static)
        if verify is not None:
            if on_lesson is not None:
                on_lesson(loaded)
            report.problems.extend(
                dynamic_problems(loaded, verify, runner=runner, device=device)
            )
    report.problems.sort()
    return report


# --------------------------------------------------------------------------- static checks


def static_problems(loaded: LoadedLesson) -> list[Problem]:
    """Problems the schema cannot see, in a lesson that validated."""
    lesson = loaded.lesson
    if lesson is None:
        return []
    problems: list[Problem] = []
    problems.extend(_translation_problems(loaded))
    problems.extend(duplicate_step_problems(loaded))
    problems.extend(_markdown_problems(loaded))
    for index, step in enumerate(lesson.steps):
        base: Loc = ("steps", index)
        if isinstance(step, (CodeStep, FixStep)):
            problems.extend(_exercise_problems(loaded, base, step))
        elif isinstance(step, AnswerStep):
            problems.extend(_answer_problems(loaded, base, step))
        elif isinstance(step, QuizStep):
            problems.extend(_quiz_problems(loaded, base, step))
    return problems


def _exercise_problems(loaded: LoadedLesson, base: Loc, step: CodeStep | FixStep) -> list[Problem]:
    problems: list[Problem] = []
    if len(step.hints) < MIN_HINTS:
        problems.append(
            loaded.problem(
                (*base, "hints") if step.hints else base,
                msg("few_hints", step=step.id, count=len(step.hints), least=MIN_HINTS),
                key=True,
                severity="warning",
            )
        )
    syntax = _syntax_problem(loaded, (*base, "solution"), step.solution, "solution")
    if syntax is not None:
        problems.append(syntax)
    problems.extend(_starter_problems(loaded, (*base, "starter")))
    for number in forbidden_without_cheat(step):
        check = step.checks[number]
        assert isinstance(check, AstCheck)
        what = f"`{check.name}`" if check.name else "`.data`"
        problems.append(loaded.problem(
            (*base, "checks", number), msg("forbidden_without_cheat", step=step.id, what=what),
            key=True))
    names = defined_names(step.solution)
    for number, check in enumerate(step.checks):
        loc: Loc = (*base, "checks", number)
        if isinstance(check, (ValueCheck, AttributeCheck)):
            problems.extend(_expr_problems(loaded, (*loc, "expr"), check.expr, names, "solution"))
        elif isinstance(check, FunctionCheck):
            if names is not None and check.function not in names:
                problems.append(
                    loaded.problem(
                        (*loc, "function"),
                        msg("function_undefined", function=check.function,
                            hint=_suggest(check.function, names)),
                    )
                )
            for case_no, case in enumerate(check.cases):
                try:
                    syntax_tree.parse(f"f({case})", mode="eval")
                except SyntaxError as exc:
                    problems.append(
                        loaded.problem(
                            (*loc, "cases", case_no),
                            msg("bad_case", error=exc.msg),
                        )
                    )
        elif isinstance(check, StdoutCheck):
            problems.extend(_stdout_problems(loaded, loc, check))
        elif isinstance(check, ErrorCheck) and check.match is not None:
            problems.extend(_regex_problems(loaded, (*loc, "match"), check.match))
        elif isinstance(check, AstCheck):
            needs_name = check.rule in ("calls", "does_not_call")
            if needs_name and not check.name:
                problems.append(
                    loaded.problem(loc, msg("ast_needs_name", rule=check.rule), key=True)
                )
            elif not needs_name and check.name:
                problems.append(
                    loaded.problem(
                        (*loc, "name"),
                        msg("ast_name_unused", rule=check.rule),
                        key=True,
                    )
                )
    return problems


def _answer_problems(loaded: LoadedLesson, base: Loc, step: AnswerStep) -> list[Problem]:
    problems: list[Problem] = []
    syntax = _syntax_problem(loaded, (*base, "code"), step.code, "code")
    if syntax is not None:
        problems.append(syntax)
    names = defined_names(step.code)
    problems.extend(_expr_problems(loaded, (*base, "expr"), step.expr, names, "code"))
    return problems


def _quiz_problems(loaded: LoadedLesson, base: Loc, step: QuizStep) -> list[Problem]:
    problems = [
        loaded.problem((*base, "hints", number), msg(
            "hint_counts_answers", step=step.id, text=hint.en if found is hint_en else hint.zh))
        for number, hint in enumerate(step.hints)
        for hint_en in (_COUNT_WORDS.search(hint.en),)
        for found in (hint_en or _COUNT_WORDS.search(hint.zh),)
        if found is not None
    ] if step.multiple else []
    return problems + _quiz_answer_problems(loaded, base, step) + _shuffle_problems(
        loaded, base, step)


def _shuffle_problems(loaded: LoadedLesson, base: Loc, step: QuizStep) -> list[Problem]:
    """Each learner sees the choices in an order of their own (:mod:`tutor.course.quiz`): a
    text that points at a choice by its place, or two choices that read the same, cannot
    survive the shuffle."""
    problems: list[Problem] = []
    texts: list[tuple[Loc, Text]] = [((*base, "prompt"), step.prompt)]
    texts += [((*base, "hints", n), hint) for n, hint in enumerate(step.hints)]
    for n, choice in enumerate(step.choices):
        texts += [((*base, "choices", n, "text"), choice.text),
                  ((*base, "choices", n, "explanation"), choice.explanation)]
    for loc, text in texts:
        for lang in LANGS:
            found = _BY_POSITION.search(text.get(lang))
            if found is not None:
                problems.append(loaded.problem(
                    (*loc, lang) if text.en != text.zh else loc,
                    msg("choice_by_position", step=step.id, words=found.group(0))))
                break
    seen: dict[str, int] = {}
    for n, choice in enumerate(step.choices):
        for lang in LANGS:
            words = " ".join(choice.text.get(lang).split()).casefold()
            if words in seen and seen[words] != n:
                problems.append(loaded.problem(
                    (*base, "choices", n, "text"),
                    msg("duplicate_choice", step=step.id, other=seen[words] + 1)))
                break
            seen[words] = n
    return problems


def quiz_answer_problem(step: QuizStep) -> Text | None:
    """What is wrong with a quiz's right answers: none marked, or several on a single-choice
    quiz (None when neither). Lint and the dynamic self-check both report it."""
    correct = sum(1 for choice in step.choices if choice.correct)
    if correct == 0:
        return msg("quiz_none_correct", step=step.id)
    if correct > 1 and not step.multiple:
        return msg("quiz_many_correct", step=step.id, count=correct)
    return None


def _quiz_answer_problems(loaded: LoadedLesson, base: Loc, step: QuizStep) -> list[Problem]:
    text = quiz_answer_problem(step)
    return [] if text is None else [loaded.problem((*base, "choices"), text, key=True)]


def _expr_problems(
    loaded: LoadedLesson, loc: Loc, expr: str, names: set[str] | None, source: str
) -> list[Problem]:
    try:
        read = free_names(expr)
    except SyntaxError as exc:
        return [loaded.problem(loc, msg("bad_expression", expr=repr(expr), error=exc.msg))]
    if names is None:
        return []
    missing = sorted(read - names - BUILTIN_NAMES)
    return [
        loaded.problem(
            loc,
            msg("check_reads_undefined", name=name, source=msg(f"source_{source}"),
                hint=_suggest(name, names)),
        )
        for name in missing
    ]


def _stdout_problems(loaded: LoadedLesson, loc: Loc, check: StdoutCheck) -> list[Problem]:
    if check.contains is None and check.regex is None and not check.same_as_solution:
        return [
            loaded.problem(
                loc,
                msg("stdout_cannot_fail"),
                key=True,
            )
        ]
    if check.regex is not None:
        return _regex_problems(loaded, (*loc, "regex"), check.regex)
    return []


def _regex_problems_text(pattern: str) -> Text | None:
    try:
        re.compile(pattern)
    except re.error as exc:
        return msg("bad_regex", error=exc)
    return None


def _regex_problems(loaded: LoadedLesson, loc: Loc, pattern: str) -> list[Problem]:
    text = _regex_problems_text(pattern)
    return [] if text is None else [loaded.problem(loc, text)]


def _suggest(name: str, names: Iterable[str]) -> Text:
    return did_you_mean_text(name, sorted(names))


def _syntax_problem(loaded: LoadedLesson, loc: Loc, source: str, what: str) -> Problem | None:
    try:
        syntax_tree.parse(source)
    except SyntaxError as exc:
        line, col = code_position(loaded, loc, exc.lineno or 1, (exc.offset or 1))
        return Problem.of(loaded.path, line, col,
                          msg("not_python", source=msg(f"source_{what}"), error=exc.msg))
    return None


def code_position(loaded: LoadedLesson, loc: Loc, code_line: int, code_col: int) -> tuple[int, int]:
    """The file position of (line, col) inside a code block stored at ``loc``.

    For a block scalar (``solution: |``) the code starts on the next line at the block's
    indentation; for an inline scalar it starts at the value (after a quote)."""
    line, col = loaded.locate(loc)
    lines = loaded.text.splitlines()
    if not 0 < line <= len(lines):
        return line, col
    start = lines[line - 1][col - 1 :]
    if start[:1] in ("|", ">"):
        body = [i for i in range(line, len(lines)) if lines[i].strip()]
        if not body:
            return line, col
        first = body[0]
        indent = len(lines[first]) - len(lines[first].lstrip(" "))
        return first + code_line, indent + code_col
    quote = 1 if start[:1] in ("'", '"') else 0
    return line + code_line - 1, col + quote + code_col - 1


# --------------------------------------------------------------------------- starters


def _starter_problems(loaded: LoadedLesson, loc: Loc) -> list[Problem]:
    """A translated starter must be the same program in both languages; a plain one whose
    comments are English prose is shown untranslated to Chinese readers."""
    raw = _get(loaded.data, loc)
    if isinstance(raw, dict) and raw.get("en") == raw.get("zh"):
        raw = raw.get("en")  # {en: X, zh: X} is a plain starter written twice
    if isinstance(raw, str):
        if any(_is_prose(c) and not _CJK.search(c) for c in code_comments(raw)):
            return [
                loaded.problem(loc, msg("starter_english_comments"), key=True,
                               severity="warning")
            ]
        return []
    if not isinstance(raw, dict):
        return []
    en, zh = raw.get("en"), raw.get("zh")
    if not isinstance(en, str) or not isinstance(zh, str):
        return []  # the schema reports it
    difference = program_difference(en, zh)
    if difference is not None:
        _, line_zh, what = difference
        line, col = code_position(loaded, (*loc, "zh"), line_zh, 1)
        return [
            Problem.of(loaded.path, line, col, msg("starter_programs_differ", what=what))
        ]
    if not any(_CJK.search(c) for c in code_comments(zh)) and any(
        _is_prose(c) for c in code_comments(zh)
    ):
        return [
            loaded.problem(
                (*loc, "zh"),
                msg("starter_zh_english"),
                severity="warning",
            )
        ]
    return []


def code_comments(code: str) -> list[str]:
    """The ``#`` comments of a piece of Python (none when it does not tokenize)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [tok.string.lstrip("#").strip() for tok in tokens if tok.type == tokenize.COMMENT]


class _NoStrings(ast.NodeTransformer):
    """Blank every string constant and drop f-strings' literal parts: text may be translated."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            return ast.copy_location(ast.Constant(value=""), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        node.values = [self.visit(v) for v in node.values if not isinstance(v, ast.Constant)]
        return node


def program_difference(en: str, zh: str) -> tuple[int, int, Text] | None:
    """Where two versions of a starter stop being the same program, comments and strings
    aside: ``(en line, zh line, what)``; None when they are the same (or both do not parse,
    which the sandbox reports)."""
    trees: list[ast.AST | SyntaxError] = []
    for code in (en, zh):
        try:
            trees.append(_NoStrings().visit(syntax_tree.parse(code)))
        except SyntaxError as exc:
            trees.append(exc)
    tree_en, tree_zh = trees
    bad_en, bad_zh = (t if isinstance(t, SyntaxError) else None for t in trees)
    if bad_en is not None and bad_zh is not None:
        return None
    bad = bad_en or bad_zh
    if bad is not None:
        lang = "en" if bad is bad_en else "zh"
        line = bad.lineno or 1
        return (line if lang == "en" else 1, line if lang == "zh" else 1,
                msg("starter_zh_not_python", lang=lang, error=bad.msg, line=line))
    found = _first_difference(tree_en, tree_zh, 1, 1)
    if found is None:
        return None
    line_en, line_zh = found
    if not line_zh:
        return line_en, 1, msg("starter_line_missing_in_zh", line=line_en,
                               code=_source_line(en, line_en))
    if not line_en:
        return 1, line_zh, msg("starter_line_not_in_en", line=line_zh,
                               code=_source_line(zh, line_zh))
    return line_en, line_zh, msg(
        "starter_lines_differ", line_en=line_en, code_en=_source_line(en, line_en),
        line_zh=line_zh, code_zh=_source_line(zh, line_zh),
    )


def _source_line(code: str, line: int) -> str:
    lines = code.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _first_difference(a: Any, b: Any, line_a: int, line_b: int) -> tuple[int, int] | None:
    line_a = getattr(a, "lineno", line_a)
    line_b = getattr(b, "lineno", line_b)
    if type(a) is not type(b):
        return line_a, line_b
    if not isinstance(a, ast.AST):
        return None if a == b else (line_a, line_b)
    for name, value_a in ast.iter_fields(a):
        value_b = getattr(b, name, None)
        if isinstance(value_a, list) and isinstance(value_b, list):
            for item_a, item_b in zip(value_a, value_b, strict=False):  # lengths: below
                found = _first_difference(item_a, item_b, line_a, line_b)
                if found is not None:
                    return found
            if len(value_a) != len(value_b):
                extra_a = value_a[len(value_b):]
                extra_b = value_b[len(value_a):]
                # 0: that side has nothing where the other goes on
                return (
                    getattr(extra_a[0], "lineno", line_a) if extra_a else 0,
                    getattr(extra_b[0], "lineno", line_b) if extra_b else 0,
                )
        else:
            found = _first_difference(value_a, value_b, line_a, line_b)
            if found is not None:
                return found
    return None


# --------------------------------------------------------------------------- markdown


def eaten_by_markdown(text: str) -> list[str]:
    """What Markdown would read as emphasis marks in prose (outside code): each a short
    excerpt around a ``*`` in a formula or an ``_`` at a name's edge."""
    prose = _INLINE_CODE.sub(" ", "".join(" " if p.code is not None else p.source
                                           for p in fenced_pieces(text)))
    found = []
    for pattern in (_FORMULA_STAR, _EDGE_UNDERSCORE):
        for match in pattern.finditer(prose):
            start, end = max(0, match.start() - 12), min(len(prose), match.end() + 12)
            found.append(prose[start:end].strip().replace("\n", " "))
    return found


def _markdown_problems(loaded: LoadedLesson) -> list[Problem]:
    """Prose whose formulas Markdown would mangle (``1*z[0] + 1*z[1]`` loses its stars)."""
    problems: list[Problem] = []
    for loc in _text_locs(loaded.data):
        value = _get(loaded.data, loc)
        texts = {"": value} if isinstance(value, str) else (
            {lang: value.get(lang) for lang in ("en", "zh")} if isinstance(value, dict) else {})
        for lang, text in texts.items():
            if not isinstance(text, str):
                continue
            for excerpt in eaten_by_markdown(text):
                what = "_" if "_" in excerpt and "*" not in excerpt else "*"
                problems.append(loaded.problem(
                    (*loc, lang) if lang else loc,
                    msg("markdown_eats_code", what=what, text=excerpt)))
                break  # one per text: the author fixes them all at once
    return problems


# --------------------------------------------------------------------------- translations


def _is_prose(text: str) -> bool:
    stripped = _CODE_SPAN.sub(" ", text)
    words = [token for token in stripped.split() if _WORD.match(token)]
    return len(words) >= PROSE_WORDS


def _text_locs(data: Any) -> Iterable[Loc]:
    """Where the lesson holds learner-facing bilingual text."""
    if not isinstance(data, dict):
        return
    yield ("title",)
    yield ("summary",)
    steps = data.get("steps")
    if not isinstance(steps, list):
        return
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        for name in _TEXT_FIELDS_OF_STEP:
            yield ("steps", i, name)
        for j in range(len(step.get("hints") or [])):
            yield ("steps", i, "hints", j)
        for j in range(len(step.get("choices") or [])):
            yield ("steps", i, "choices", j, "text")
            yield ("steps", i, "choices", j, "explanation")
        for j in range(len(step.get("checks") or [])):
            yield ("steps", i, "checks", j, "label")


def _get(data: Any, loc: Loc) -> Any:
    node = data
    for part in loc:
        if isinstance(node, dict):
            if part not in node:
                return None
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return None
    return node


def _translation_problems(loaded: LoadedLesson) -> list[Problem]:
    """Prose given once for both languages, or a ``zh`` that merely copies ``en``."""
    problems: list[Problem] = []
    for loc in _text_locs(loaded.data):
        value = _get(loaded.data, loc)
        if isinstance(value, str):
            if _CJK.search(value):
                problems.append(
                    loaded.problem(
                        loc,
                        msg("plain_chinese"),
                    )
                )
            elif _is_prose(value):
                problems.append(
                    loaded.problem(
                        loc,
                        msg("missing_translation"),
                    )
                )
        elif isinstance(value, dict):
            en, zh = value.get("en"), value.get("zh")
            if isinstance(en, str) and en == zh and _is_prose(en):
                problems.append(
                    loaded.problem(
                        (*loc, "zh"),
                        msg("zh_copies_en"),
                        severity="warning",
                    )
                )
    return problems


# --------------------------------------------------------------------------- dynamic checks


def condemned_checks(step: CodeStep | FixStep) -> set[int]:
    """Indices of the checks a static problem already condemns (a name the solution never
    defines, an expression or regex that does not parse, a function the solution lacks):
    running them could only echo that problem, so lint runs the step without them."""
    names = defined_names(step.solution)
    bad: set[int] = set()
    for number, check in enumerate(step.checks):
        if isinstance(check, (ValueCheck, AttributeCheck)):
            try:
                read = free_names(check.expr)
            except SyntaxError:
                bad.add(number)
                continue
            if names is not None and read - names - BUILTIN_NAMES:
                bad.add(number)
        elif isinstance(check, FunctionCheck):
            if names is not None and check.function not in names:
                bad.add(number)
        elif isinstance(check, (StdoutCheck, ErrorCheck)):
            pattern = check.regex if isinstance(check, StdoutCheck) else check.match
            if pattern is not None and _regex_problems_text(pattern) is not None:
                bad.add(number)
        elif isinstance(check, AstCheck) and (
            (check.rule in ("calls", "does_not_call")) != bool(check.name)
        ):
            bad.add(number)
    return bad


def runnable_lesson(loaded: LoadedLesson) -> tuple[Lesson | None, dict[str, int], list[Problem]]:
    """The lesson as lint runs it, so that one pass shows every problem.

    Each step runs under an id of its own (a duplicate id must neither hide nor misplace a
    step's results): the map gives each run id's step index. Checks a static problem
    condemns are left out and the others still run. A step whose code is not valid Python
    cannot run at all: it is left out, and a note says so (never silently)."""
    lesson = loaded.lesson
    if lesson is None:
        return None, {}, []
    steps = []
    where: dict[str, int] = {}
    notes: list[Problem] = []
    for index, step in enumerate(lesson.steps):
        code = step.solution if isinstance(step, (CodeStep, FixStep)) else (
            step.code if isinstance(step, AnswerStep) else "")
        if not parses(code):
            field_name = "solution" if isinstance(step, (CodeStep, FixStep)) else "code"
            notes.append(loaded.problem(
                ("steps", index), msg("not_run_syntax", step=step.id, field=field_name),
                key=True, severity="warning",
            ))
            continue
        run_id = step.id if step.id not in where else f"{step.id}#{index}"
        update: dict[str, Any] = {"id": run_id}
        if isinstance(step, (CodeStep, FixStep)):
            bad = condemned_checks(step)
            if bad:
                update["checks"] = [c for i, c in enumerate(step.checks) if i not in bad]
        where[run_id] = index
        steps.append(step.model_copy(update=update))
    return lesson.model_copy(update={"steps": steps}), where, notes


def dynamic_problems(
    loaded: LoadedLesson, verify: VerifyLesson, *, runner: Any, device: str = "cpu"
) -> list[Problem]:
    """Run ``verify`` (reference solutions in the sandbox) on :func:`runnable_lesson` and
    place what it reports at the field of its step."""
    lesson, where, problems = runnable_lesson(loaded)
    if lesson is None:
        return []
    for found in verify(lesson, runner=runner, device=device):
        step_index = where.get(found.step_id)
        if step_index is None:
            loc: Loc = ()
            step_id = found.step_id
        else:
            loc = ("steps", step_index, *_field_loc(found.field))
            step_id = loaded.lesson.steps[step_index].id  # type: ignore[union-attr]
        text = getattr(found, "text", None)
        detail = text if isinstance(text, Text) else Text(en=found.message, zh=found.message)
        field_part = f" {found.field}" if found.field else ""
        problems.append(loaded.problem(
            loc, msg("step_field", step=step_id, field=field_part, message=detail), key=True))
    return problems


def _field_loc(name: str | None) -> Loc:
    """``"checks[1].expr"`` / ``"checks.1"`` / ``"solution"`` -> a loc tuple."""
    if not name:
        return ()
    parts: list[str | int] = []
    for token in re.findall(r"[^.\[\]]+", name):
        parts.append(int(token) if token.isdigit() else token)
    return tuple(parts)
