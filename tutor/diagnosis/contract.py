"""The text contract every diagnosis keeps, in both languages, checked on its finished text.

A teacher would not sign a diagnosis that shows the learner a placeholder (``?``,
"(not recorded)", an unfilled ``{name}``), names a line the program does not have or a line
in the title other than the one the diagnosis is about, speaks of variables the program does
not have (a template's ``t`` or ``model``) or rewrites the learner's expression instead of
quoting it, proposes as the fix the very line the learner wrote, or leaves stray spaces in
Chinese. The engine keeps these by construction (catalog variants chosen by the facts known,
names quoted from the source, fixes tried); :func:`violations` says where a text breaks one,
for the tests and the benchmark.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from tutor import syntax_tree
from tutor.diagnosis.filling import stray_space
from tutor.diagnosis.models import SHOWN_TEXTS, Diagnosis
from tutor.i18n import Text

PLACEHOLDERS = re.compile(
    r"\{[a-z_0-9]+\}|\(not recorded\)|（未记录）"
    # a lone '?' where a value should be: "from ? to ?", "`?`", "(?)"; a question mark
    # that ends a word or a code span ("is it `None`?") is English, not a placeholder
    r"|(?:^|(?<=[\s(（:：,，]))\?(?=$|[\s)）,，.。:：;；])|`\?`"
)
LINE_EN = re.compile(r"\blines? (\d+(?:(?:, | and | or |-)\d+)*)", re.IGNORECASE)
LINE_ZH = re.compile(r"第 ?(\d+(?:(?:、|, |，| 和 | 或 |-)\d+)*) ?行")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)
PROSE_SPAN = re.compile(r"(?:the|a|an|this|that|its|it)(?: [a-z]+)*")
"""A code span that is a word of prose ("`the input`", "`it`"): a name made up for a value
the learner never named."""
KNOWN_NAMES = frozenset(dir(builtins)) | {
    "torch", "nn", "F", "np", "numpy", "math", "optim", "self", "functional", "copy",
}
"""Names a snippet may use that the learner's program need not define."""


def texts(diagnosis: Diagnosis) -> Iterator[tuple[str, Text]]:
    """Every text a face may show, by field name."""
    for field in SHOWN_TEXTS:
        value = getattr(diagnosis, field)
        if value is not None:
            yield field, value
    for n, step in enumerate(diagnosis.chain):
        yield f"chain[{n}]", step


def line_numbers(text: str) -> set[int]:
    """The line numbers a text names ("line 4", "lines 3, 5", "第 4 行", "第 3、5 行")."""
    found: set[int] = set()
    for pattern in (LINE_EN, LINE_ZH):
        for match in pattern.finditer(text):
            found.update(int(n) for n in re.findall(r"\d+", match.group(1)))
    return found


def _program_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


class Program:
    """What the checks need to know of the learner's program."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.lines = code.splitlines()
        try:
            self.tree: ast.Module | None = syntax_tree.parse(code)
        except (SyntaxError, ValueError):
            self.tree = None
        self.names = _program_names(self.tree) if self.tree is not None else set()
        self.expressions = {ast.dump(n) for n in ast.walk(self.tree)
                            if isinstance(n, ast.expr) and not isinstance(n, ast.Name)
                            } if self.tree is not None else set()

    def statement(self, line: int | None) -> str | None:
        """The dump of the one simple statement on a line, None when there is not exactly
        one."""
        if self.tree is None or line is None:
            return None
        found = [n for n in ast.walk(self.tree) if isinstance(n, ast.stmt)
                 and not hasattr(n, "body") and n.lineno == line]
        return ast.dump(found[0]) if len(found) == 1 else None


def _parse_span(span: str) -> ast.AST | None:
    try:
        return syntax_tree.parse(span.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        pass
    try:
        module = syntax_tree.parse(span.strip())
    except (SyntaxError, ValueError):
        return None
    return module.body[0] if len(module.body) == 1 else None


def _variables(node: ast.AST) -> set[str]:
    """The names a snippet reads as the learner's variables: not what it calls, not the
    parameters of a library call it describes (``nn.Linear(in_features, out_features)``),
    not what it binds itself (a comprehension's variable, an assignment's target)."""
    skipped: set[int] = set()
    bound: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            skipped.add(id(n.func))
            root = n.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in KNOWN_NAMES and root is not n.func:
                skipped.update(id(a) for a in n.args)
        elif isinstance(n, ast.comprehension):
            bound.update(t.id for t in ast.walk(n.target) if isinstance(t, ast.Name))
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load) and id(n) not in skipped} - bound


def _span_problems(field: str, span: str, program: Program,
                   fix_lines: set[str]) -> Iterator[str]:
    if PROSE_SPAN.fullmatch(span.strip()) and span.strip() not in program.names:
        yield f"{field}: `{span}` is prose shown as code, not a name the program has"
        return
    node = _parse_span(span)
    if node is None or isinstance(node, ast.Name):
        return  # not code, or one word (an API's name: `reshape`, `no_grad`)
    unknown = sorted(n for n in _variables(node)
                     if n not in program.names and n not in KNOWN_NAMES)
    if unknown:
        yield f"{field}: `{span}` names {', '.join(unknown)}, which the program does not have"
    if (isinstance(node, ast.expr) and not isinstance(node, ast.Constant)
            and ast.dump(node) in program.expressions
            and span not in program.code):
        yield f"{field}: `{span}` is the program's expression rewritten, not its source text"
    if field == "fix" and isinstance(node, ast.stmt | ast.expr):
        statement = ast.dump(node if isinstance(node, ast.stmt) else ast.Expr(node))
        if statement in fix_lines:
            yield f"fix: `{span}` is the learner's own line: the fix changes nothing"


def _block_problems(field: str, block: str, program: Program) -> Iterator[str]:
    """A fenced snippet reads only names the program has or the snippet binds itself."""
    try:
        tree = syntax_tree.parse(block)
    except (SyntaxError, ValueError):
        return
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    unknown = sorted(_variables(tree) - bound - program.names - KNOWN_NAMES)
    if unknown:
        yield f"{field}: the snippet names {', '.join(unknown)}, which the program does not have"


def _patch_names(patch: str | None) -> set[str]:
    """The names a tried change binds on the lines it adds (``unrounded = net(x)``): a fix's
    text may name them, the program has them once the change is made."""
    names: set[str] = set()
    for line in (patch or "").splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        try:
            tree = syntax_tree.parse(line[1:].strip())
        except (SyntaxError, ValueError):
            continue
        names.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                     and isinstance(n.ctx, ast.Store))
    return names


def violations(diagnosis: Diagnosis, code: str) -> list[str]:
    """Where the diagnosis's texts break the contract; empty when they keep it."""
    program = Program(code)
    program.names |= _patch_names(diagnosis.patch)
    problems: list[str] = []
    anchors = {n for n in (diagnosis.line, diagnosis.root_line) if n is not None}
    fix_lines = {s for s in (program.statement(n) for n in anchors) if s is not None}
    for field, text in texts(diagnosis):
        numbers = {lang: line_numbers(getattr(text, lang)) for lang in ("en", "zh")}
        if field not in ("details", "fix_check") and numbers["en"] != numbers["zh"]:
            problems.append(f"{field}: lines {sorted(numbers['en'])} in English, "
                            f"{sorted(numbers['zh'])} in Chinese")
        for lang in ("en", "zh"):
            words: str = getattr(text, lang)
            for found in PLACEHOLDERS.finditer(words):
                problems.append(f"{field} ({lang}): placeholder {found.group(0)!r}: {words!r}")
            outside = [n for n in numbers[lang] if not 1 <= n <= len(program.lines)]
            if outside:
                problems.append(f"{field} ({lang}): line {outside[0]} is not in the program")
            if field == "title" and anchors and numbers[lang] and not numbers[lang] & anchors:
                problems.append(f"title ({lang}) names line {sorted(numbers[lang])}, the "
                                f"diagnosis is about line {sorted(anchors)}")
            if lang == "zh" and stray_space().search(CODE_SPAN.sub("x", words)):
                problems.append(f"{field} (zh): a stray space in Chinese: {words!r}")
        if program.tree is not None and field not in ("details", "fix_check"):
            for span in dict.fromkeys(CODE_SPAN.findall(text.en) + CODE_SPAN.findall(text.zh)):
                problems.extend(_span_problems(field, span, program, fix_lines))
            for block in dict.fromkeys(FENCE.findall(text.en) + FENCE.findall(text.zh)):
                problems.extend(_block_problems(field, block, program))
    if diagnosis.patch is not None and not re.search(r"^[-+](?![-+])", diagnosis.patch,
                                                     re.MULTILINE):
        problems.append("patch: the tried change changes no line")
    return problems
