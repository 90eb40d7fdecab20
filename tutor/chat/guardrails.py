"""Guardrails enforced in code: an answer never shows the current step's reference solution
or its expected numbers.

Every answer (offline or from an LLM) is checked before it is shown:

- **solution code**: the solution's non-trivial lines (normalised: comments and spaces dropped)
  that the learner was not already shown (starter, prompt, lesson code) must not appear, and
  the answer's code must not share a long run of tokens with the solution;
- **expected numbers**: literals from the step's checks (``expected``, ``cross_check``) and
  any expected values the caller passes (e.g. from the grader's solution run). A value with
  several elements leaks when its numbers appear in order; a single number anywhere when it
  is not a trivial one (0, 1, 2, ...) and the learner has not seen it in the step already;
- **a single expected value stated as the value of its expression**: whatever the number (a
  trivial ``4.``, ``10``, ``-1``) or a bool/name (``False``, ``SumBackward0``), "``x.grad`` is
  4.", "``print(x.grad)  # tensor(4.)``", "``x.grad`` 是 4" give the answer of the step whose
  check is ``x.grad``, while a "1" elsewhere in prose does not.
"""

from __future__ import annotations

import io
import math
import re
import tokenize as pytokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tutor.course.models import AnswerStep, CodeStep, Course, FixStep, Step, ValueCheck

if TYPE_CHECKING:
    from tutor.diagnosis.models import Diagnosis

NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w])")
TRIVIAL_NUMBERS = frozenset({0.0, 1.0, 2.0, 3.0, -1.0, 10.0})
"""Numbers so common that mentioning one is not giving an answer away."""
MIN_LINE_TOKENS = 7
"""Solution lines with fewer tokens (``y.backward()``, ``import torch``) are concepts every
lesson shows, not answers; ``z.sum().backward()`` (9 tokens) is an answer."""
MIN_COURSE_LINE_TOKENS = 3
"""A solution line shorter than this (``import torch``, ``return y``) gives nothing away."""
NGRAM = 10
"""Tokens in a row shared with the solution that count as pasting it."""
REDACTED = "…"


@dataclass(frozen=True)
class Secrets:
    """What must not be shown for one step."""

    solution_lines: frozenset[str] = frozenset()
    solution_ngrams: frozenset[tuple[str, ...]] = frozenset()
    expected: tuple[tuple[float, ...], ...] = ()
    seen_numbers: frozenset[float] = frozenset()
    bound: tuple[tuple[str, float | str], ...] = ()
    """(expression, its single expected value): a number, or a bool/str as written."""

    @property
    def empty(self) -> bool:
        return not (self.solution_lines or self.solution_ngrams or self.expected or self.bound)


@dataclass
class LeakReport:
    code_lines: list[str] = field(default_factory=list)
    numbers: list[tuple[float, ...]] = field(default_factory=list)
    ngram: bool = False
    bound: list[tuple[int, int]] = field(default_factory=list)
    """Spans of expected values stated as the value of their expression."""

    @property
    def leaked(self) -> bool:
        return bool(self.code_lines or self.numbers or self.ngram or self.bound)


def normalise_line(line: str) -> str:
    line = line.split("#", 1)[0] if "#" in line and "'" not in line and '"' not in line else line
    return re.sub(r"\s+", "", line).rstrip(";")


def code_tokens(text: str) -> list[str]:
    """Python tokens of ``text`` (names, operators, numbers); prose tokenises too."""
    out: list[str] = []
    try:
        for tok in pytokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (pytokenize.NAME, pytokenize.OP, pytokenize.NUMBER, pytokenize.STRING):
                out.append(tok.string)
    except (pytokenize.TokenError, IndentationError, SyntaxError):
        out = re.findall(r"\w+|[^\w\s]", text)
    return out


def _ngrams(tokens: Sequence[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def flatten_numbers(value: Any) -> list[float]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, str):
        return [float(m) for m in NUMBER_RE.findall(value)]
    if isinstance(value, dict):
        return flatten_numbers(value.get("values", list(value.values())))
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in flatten_numbers(item)]
    return []


def step_secrets(
    step: Step | None,
    *,
    expected_values: Iterable[Any] = (),
    shown: Iterable[str] = (),
    expected_by_expr: Mapping[str, Any] | None = None,
) -> Secrets:
    """The secrets of ``step``. ``shown`` is text the learner already sees (lesson code...);
    ``expected_values``/``expected_by_expr``: expected values known to the caller (e.g. from
    the solution run), without or with the expression they are the value of."""
    shown_text = "\n".join(shown)
    solution = ""
    visible = shown_text
    named: dict[str, Any] = {}
    if isinstance(step, (CodeStep, FixStep)):
        solution = step.solution
        starters = step.starters.en + "\n" + step.starters.zh  # what the learner was given
        visible += "\n" + starters + "\n" + step.prompt.en + "\n" + step.prompt.zh
        named |= {
            c.expr: c.expected
            for c in step.checks
            if isinstance(c, ValueCheck) and c.expected is not None
        }
    elif isinstance(step, AnswerStep):
        visible += "\n" + step.code + "\n" + step.prompt.en + "\n" + step.prompt.zh
        named[step.expr] = step.cross_check
    named |= dict(expected_by_expr or {})
    literals: list[Any] = [*expected_values, *named.values()]
    visible_lines = {normalise_line(line) for line in visible.splitlines()}
    # a "Fix it" step's change is its answer however short (``y.retain_grad()``): the lines
    # its solution adds to the starter count from MIN_COURSE_LINE_TOKENS
    shortest = MIN_COURSE_LINE_TOKENS if isinstance(step, FixStep) else MIN_LINE_TOKENS
    lines = frozenset(
        n
        for line in solution.splitlines()
        if len(code_tokens(line)) >= shortest
        and (n := normalise_line(line)) not in visible_lines
    )
    grams = _ngrams(code_tokens(solution)) - _ngrams(code_tokens(visible))
    expected = tuple(tuple(nums) for v in literals if (nums := flatten_numbers(v)))
    seen = frozenset(float(m) for m in NUMBER_RE.findall(visible))
    bound = tuple((expr, v) for expr, value in named.items() if (v := _single(value)) is not None)
    return Secrets(lines, frozenset(grams), expected, seen, bound)


def course_secrets(solution_lines: frozenset[str], question: str = "") -> Secrets:
    """Every exercise's secret lines (:func:`course_solution_lines`) less those ``question``
    holds already."""
    asked = {normalise_line(line) for line in question.splitlines()}
    flat = re.sub(r"\s+", "", question)
    kept = frozenset(line for line in solution_lines if line not in asked and line not in flat)
    return Secrets(solution_lines=kept)


def course_solution_lines(course: Course) -> frozenset[str]:
    """The reference solutions' lines of every exercise of ``course`` (normalised; those of
    three tokens or more) that the learner is shown nowhere: no starter, prompt or answer
    step's code holds them."""
    solutions: list[str] = []
    shown: list[str] = []
    for lesson in course.lessons:
        for step in lesson.steps:
            if isinstance(step, (CodeStep, FixStep)):
                solutions.append(step.solution)
                shown += [step.starters.en, step.starters.zh, step.prompt.en, step.prompt.zh]
            elif isinstance(step, AnswerStep):
                shown += [step.code, step.prompt.en, step.prompt.zh]
    visible = {normalise_line(line) for text in shown for line in text.splitlines()}
    return frozenset(
        n
        for solution in solutions
        for line in solution.splitlines()
        if len(code_tokens(line)) >= MIN_COURSE_LINE_TOKENS
        and (n := normalise_line(line)) not in visible
    )


def _single(value: Any) -> float | str | None:
    """A value that is one number, bool or name (what a bound statement can give away)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w.]*", value.strip()):
        return value.strip()
    numbers = flatten_numbers(value)
    return numbers[0] if len(numbers) == 1 and not isinstance(value, str) else None


_BINDER = (
    r"(?:==|=>|->|→|=|:|#|,|，|：|\bis\b|\bequals?\b|\bbecomes\b|\b(?:will|should|would)\s+be\b"
    r"|\bgives\b|\bcomes\s+out\s+(?:as|to)\b|是|为|等于|变成|得到)"
)
_SYMBOL_BINDER = r"(?:==|=>|->|→|=|:|#|：)"
_FILLER = r"[\s`'\"*]*"
_VALUE_PREFIX = r"(?:tensor\(\s*)?(?:\[\s*)*"


@lru_cache(maxsize=256)
def _binding_re(expr: str) -> re.Pattern[str]:
    """``expr`` followed by a word or sign that states its value, then the value."""
    # a one- or two-letter name ("a", "w") is too common a word for "is"/"是" to bind it
    short = re.fullmatch(r"\w{1,2}", expr) is not None
    binder = _SYMBOL_BINDER if short else _BINDER
    return re.compile(
        rf"(?<![\w.]){re.escape(expr)}(?![\w(\[])\)?{_FILLER}(?:{binder}{_FILLER})+{_VALUE_PREFIX}"
        rf"(?P<value>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|[A-Za-z_]\w*)",
        re.IGNORECASE,
    )


def bound_spans(text: str, bound: Iterable[tuple[str, float | str]]) -> list[tuple[int, int]]:
    """Where ``text`` states one of the expected values as the value of its expression."""
    spans = []
    for expr, value in bound:
        for match in _binding_re(expr).finditer(text):
            got = match.group("value")
            if isinstance(value, float):
                hit = NUMBER_RE.fullmatch(got) is not None and _close(float(got), value)
            else:
                hit = got == value
            if hit:
                spans.append(match.span("value"))
    return sorted(set(spans))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-4)


def _contains_run(haystack: Sequence[float], needle: Sequence[float]) -> bool:
    n = len(needle)
    return any(
        all(_close(haystack[i + k], needle[k]) for k in range(n))
        for i in range(len(haystack) - n + 1)
    )


def find_leaks(text: str, secrets: Secrets, *, question: str = "") -> LeakReport:
    report = LeakReport()
    if secrets.empty:
        return report
    answer_lines = {normalise_line(line) for line in text.splitlines()}
    flat = re.sub(r"\s+", "", text)
    report.code_lines = sorted(
        line for line in secrets.solution_lines if line in answer_lines or line in flat
    )
    report.ngram = bool(_ngrams(code_tokens(text)) & secrets.solution_ngrams)
    report.bound = bound_spans(text, secrets.bound)
    numbers = [float(m) for m in NUMBER_RE.findall(text)]
    asked = {float(m) for m in NUMBER_RE.findall(question)}
    for value in secrets.expected:
        if len(value) > 1:
            if _contains_run(numbers, value):
                report.numbers.append(value)
        elif (
            value[0] not in TRIVIAL_NUMBERS
            and value[0] not in secrets.seen_numbers
            and value[0] not in asked
            and any(_close(n, value[0]) for n in numbers)
        ):
            report.numbers.append(value)
    return report


def redact(text: str, secrets: Secrets, report: LeakReport) -> str:
    """``text`` with leaking code lines and expected numbers replaced by an ellipsis."""
    for start, end in sorted(report.bound, reverse=True):  # spans of the original text
        text = text[:start] + REDACTED + text[end:]
    out_lines = []
    for line in text.splitlines():
        norm = normalise_line(line)
        leaky = any(sol in norm for sol in report.code_lines) or bool(
            _ngrams(code_tokens(line), min(NGRAM, 6)) & _shorter(secrets.solution_ngrams, 6)
        )
        out_lines.append(REDACTED if leaky else line)
    text = "\n".join(out_lines)
    leaking = {n for value in report.numbers for n in value}
    if leaking:

        def sub(match: re.Match[str]) -> str:
            value = float(match.group(0))
            return REDACTED if any(_close(value, n) for n in leaking) else match.group(0)

        text = NUMBER_RE.sub(sub, text)
    return text


def without_bare_redactions(text: str) -> str:
    """``text`` without the prose lines redaction left as a bare "…" (a whole sentence that
    named the answer: the note at the end says parts were left out); in a code block the "…"
    stays, where a line of code was."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.strip() == REDACTED:
            continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _shorter(grams: Iterable[tuple[str, ...]], n: int) -> set[tuple[str, ...]]:
    return {g[i : i + n] for g in grams for i in range(len(g) - n + 1)}


def shown_diagnoses(diagnoses: Iterable[Diagnosis], step: Step | None) -> list[Diagnosis]:
    """The diagnoses as every face shows them on ``step`` (the Diagnosis tab and the tutor
    chat alike): a concrete fix that would give the step's solution away — a solution line,
    an expected value — is replaced by a pointer to the step's hints, together with the
    tried patch and what its re-run showed. What happened and why stay."""
    secrets = step_secrets(step)
    if secrets.empty:
        return list(diagnoses)
    from tutor.chat import messages

    out = []
    for diagnosis in diagnoses:
        check = diagnosis.fix_check
        told = [diagnosis.fix.en, diagnosis.fix.zh, diagnosis.patch or ""]
        told += [check.en, check.zh] if check is not None else []
        if any(find_leaks(text, secrets).leaked for text in told if text):
            diagnosis = diagnosis.model_copy(
                update={"fix": messages.FIX_WITHHELD, "patch": None, "fix_check": None}
            )
        out.append(diagnosis)
    return out
