"""Static lint: every problem in one pass, at the right line and column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tutor.course.lint import code_position, collect_files, lint_paths
from tutor.course.loader import load_lesson_with_positions
from tutor.errors import TutorError

HEAD = "id: demo\ntitle: {en: Demo, zh: 演示}\nsteps:\n"
HINTS = (
    "    hints:\n"
    "      - {en: Look again at the task., zh: 再读一遍题目。}\n"
    "      - {en: Write exactly what it says., zh: 照题目写。}\n"
)


def _code_step(solution: str, checks: str, *, hints: str = HINTS, step_id: str = "s1") -> str:
    body = "".join(f"      {line}\n" for line in solution.splitlines())
    return (
        f"  - id: {step_id}\n"
        "    kind: code\n"
        "    title: {en: Step, zh: 步骤}\n"
        "    prompt: {en: Do it., zh: 做吧。}\n"
        "    solution: |\n"
        f"{body}"
        "    checks:\n"
        f"{checks}"
        f"{hints}"
    )


def _lint(write_lesson, text: str) -> list[tuple[int, int, str, str]]:
    report = lint_paths([write_lesson(text)])
    return [(p.line, p.col, p.severity, p.message) for p in report.problems]


def test_mini_course_is_clean(mini_course: Path):
    report = lint_paths([mini_course])
    assert report.problems == []
    assert report.summary() == "2 lessons, 9 steps: all clean"
    assert not report.failed(strict=True)


def test_check_naming_an_undefined_variable(write_lesson):
    checks = (
        "      - {kind: value, expr: x.grad}\n"
        "      - {kind: value, expr: 'torch.allclose(x.grad, y_grad)'}\n"
        "      - {kind: value, expr: '[v * 2 for v in range(3)]'}\n"
        "      - {kind: function, function: grad_of, cases: ['x']}\n"
    )
    solution = "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()"
    found = _lint(write_lesson, HEAD + _code_step(solution, checks))
    assert [(line, col) for line, col, _, _ in found] == [(14, 29), (16, 36)]
    assert "'y_grad', which the solution never defines" in found[0][3]
    assert "function 'grad_of', which the solution never defines" in found[1][3]


def test_names_from_defs_imports_loops_and_with_count_as_defined(write_lesson):
    solution = (
        "import torch as t\n"
        "from math import pi\n"
        "def f(v):\n"
        "    return v * 2\n"
        "for i in range(2):\n"
        "    last = i\n"
        "with t.no_grad():\n"
        "    w = t.ones(1)\n"
        "try:\n"
        "    pass\n"
        "except ValueError as err:\n"
        "    pass\n"
        "a, (b, *rest) = 1, (2, 3, 4)"
    )
    checks = "".join(
        f"      - {{kind: value, expr: '{expr}'}}\n"
        for expr in ("f(pi)", "t.zeros(i + last)", "w", "err", "a + b + len(rest)", "abs(-1)")
    )
    assert _lint(write_lesson, HEAD + _code_step(solution, checks)) == []


def test_star_import_makes_names_unknowable_so_no_false_alarm(write_lesson):
    checks = "      - {kind: value, expr: ones}\n"
    assert _lint(write_lesson, HEAD + _code_step("from torch import *", checks)) == []


def test_solution_syntax_error_points_into_the_block(write_lesson):
    checks = "      - {kind: no_error}\n"
    found = _lint(write_lesson, HEAD + _code_step("x = 1\ny = (x +\nz = 2", checks))
    [(line, col, severity, message)] = found
    assert severity == "error" and message.startswith("solution is not valid Python")
    assert line in (10, 11, 12) and col >= 7


def test_code_position_maps_block_and_inline_scalars(write_lesson):
    path = write_lesson(
        HEAD + "  - id: a\n    kind: answer\n    title: T\n    prompt: P\n"
        '    code: |\n      x = 1\n      y = 2\n    expr: "y"\n'
    )
    loaded = load_lesson_with_positions(path)
    assert code_position(loaded, ("steps", 0, "code"), 2, 3) == (10, 9)
    assert code_position(loaded, ("steps", 0, "expr"), 1, 1) == (11, 12)


def test_answer_expression_must_be_defined_by_its_code(write_lesson):
    text = HEAD + (
        "  - id: a\n    kind: answer\n    title: T\n    prompt: P\n"
        "    code: |\n      x = 1\n    expr: x.gard + z\n"
    )
    [(line, col, _, message)] = _lint(write_lesson, text)
    assert (line, col) == (10, 11) and "'z', which the code never defines" in message


def test_bad_expression_syntax(write_lesson):
    checks = "      - {kind: value, expr: 'x.grad['}\n"
    [(line, col, _, message)] = _lint(write_lesson, HEAD + _code_step("x = 1", checks))
    assert (line, col) == (11, 29) and "not valid Python" in message


def test_too_few_hints_is_a_warning_that_only_strict_fails(write_lesson):
    one_hint = "    hints:\n      - {en: Try., zh: 试试。}\n"
    path = write_lesson(HEAD + _code_step("x = 1", "      - {kind: no_error}\n", hints=one_hint))
    report = lint_paths([path])
    [problem] = report.problems
    assert problem.severity == "warning" and (problem.line, problem.col) == (12, 5)
    assert "1 hint(s)" in problem.message
    assert problem.format().startswith(f"{path}:12:5: warning: ")
    assert not report.failed() and report.failed(strict=True)
    assert report.summary() == "1 lesson, 1 step: no errors, 1 warning in 1 file"


def test_no_hints_at_all_points_at_the_step(write_lesson):
    path = write_lesson(HEAD + _code_step("x = 1", "      - {kind: no_error}\n", hints=""))
    [problem] = lint_paths([path]).problems
    assert (problem.line, problem.col, problem.severity) == (4, 5, "warning")


def test_duplicate_step_ids(write_lesson):
    step = "  - {id: same, kind: reading, title: T, body: B}\n"
    [(line, col, _, message)] = _lint(write_lesson, HEAD + step + step)
    assert (line, col) == (5, 10) and "duplicate step id 'same' (also on line 4)" in message


def test_duplicate_lesson_ids_across_files(tmp_path: Path):
    text = HEAD + "  - {id: a, kind: reading, title: T, body: B}\n"
    (tmp_path / "01-one.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "02-two.yaml").write_text(text, encoding="utf-8")
    report = lint_paths([tmp_path])
    [problem] = report.problems
    assert problem.path.name == "02-two.yaml" and (problem.line, problem.col) == (1, 5)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("计算梯度", "Chinese text given as a plain string"),
        ("Compute the gradient", "missing translation"),
        ("x.grad", None),
        ("`torch.no_grad()` and `detach()`", None),
        ("y = x * 2", None),
        ('"grad can be implicitly created only for scalar outputs"', None),
        ("requires_grad", None),
    ],
)
def test_plain_string_prose_needs_a_translation(write_lesson, title: str, expected: str | None):
    quoted = title.replace("'", "''")
    text = HEAD + f"  - id: a\n    kind: reading\n    title: '{quoted}'\n    body: B\n"
    found = _lint(write_lesson, text)
    if expected is None:
        assert found == []
    else:
        [(line, col, severity, message)] = found
        assert (line, col, severity) == (6, 12, "error") and expected in message


def test_zh_copied_from_en_is_a_warning(write_lesson):
    text = HEAD + (
        "  - id: a\n    kind: reading\n    title: T\n"
        "    body: {en: Read this carefully now., zh: Read this carefully now.}\n"
    )
    [(line, _, severity, message)] = _lint(write_lesson, text)
    assert line == 7 and severity == "warning" and "copy of the 'en'" in message


def test_quiz_needs_a_correct_choice_and_multiple_for_several(write_lesson):
    def quiz(flags: tuple[bool, bool], multiple: bool) -> str:
        choices = "".join(
            f"      - {{text: C{i}, correct: {str(flag).lower()}, explanation: E}}\n"
            for i, flag in enumerate(flags)
        )
        return (
            "  - id: q\n    kind: quiz\n    title: T\n    prompt: P\n"
            f"    multiple: {str(multiple).lower()}\n    choices:\n{choices}"
        )

    [none] = _lint(write_lesson, HEAD + quiz((False, False), False))
    assert (none[0], none[1]) == (9, 5) and "no choice marked correct" in none[3]
    [two] = _lint(write_lesson, HEAD + quiz((True, True), False))
    assert "2 correct choices but 'multiple' is not true" in two[3]
    assert _lint(write_lesson, HEAD + quiz((True, True), True)) == []


def test_checks_that_cannot_fail_or_are_malformed(write_lesson):
    checks = (
        "      - {kind: stdout}\n"
        "      - {kind: stdout, regex: '(unclosed'}\n"
        "      - {kind: ast, rule: calls}\n"
        "      - {kind: ast, rule: calls_backward, name: backward}\n"
        "      - {kind: error, match: '[bad'}\n"
        "      - {kind: function, function: f, cases: ['1,,2']}\n"
    )
    found = _lint(write_lesson, HEAD + _code_step("def f(a, b=0):\n    return a", checks))
    lines = [(line, col) for line, col, _, _ in found]
    assert lines == [(12, 9), (13, 31), (14, 9), (15, 43), (16, 30), (17, 47)]
    messages = " | ".join(m for *_, m in found)
    for part in (
        "cannot fail",
        "invalid regular expression",
        "needs 'name'",
        "only used by the rules calls/does_not_call",
        "not a Python argument list",
    ):
        assert part in messages


def test_all_problems_in_one_pass_sorted_by_path_and_line(broken_lessons: Path):
    report = lint_paths([broken_lessons])
    assert len(report.files) == 8  # README.md is not a lesson
    keys = [(p.path, p.line, p.col) for p in report.problems]
    assert keys == sorted(keys)
    assert len({p.path for p in report.problems}) == 6  # two need the solutions to be run


def test_collect_files_errors_on_a_missing_path(tmp_path: Path):
    with pytest.raises(TutorError, match="no such file or folder"):
        collect_files([tmp_path / "missing.yaml"])


@dataclass(frozen=True)
class FakeSelfCheckProblem:
    step_id: str
    field: str
    message: str


def test_dynamic_problems_are_mapped_to_the_field_of_the_step(mini_course: Path):
    calls: list[tuple[str, object, str]] = []

    def fake_verify(lesson, *, runner, device="cpu"):
        calls.append((lesson.id, runner, device))
        if lesson.id != "mini-graph":
            return []
        return [
            FakeSelfCheckProblem("fix-scalar", "starter", "the starter passes every check"),
            FakeSelfCheckProblem("grad-function", "solution", "check 1 failed"),
            FakeSelfCheckProblem("no-grad-print", "checks[2]", "stdout differs"),
            FakeSelfCheckProblem("gone", "", "unknown step"),
        ]

    runner = object()
    report = lint_paths([mini_course], verify=fake_verify, runner=runner, device="cuda:0")
    assert calls == [("mini-basics", runner, "cuda:0"), ("mini-graph", runner, "cuda:0")]
    found = [(p.line, p.col, p.message) for p in report.problems]
    assert found == [
        (3, 1, "step 'gone': unknown step"),
        (17, 5, "step 'fix-scalar' starter: the starter passes every check"),
        (101, 9, "step 'no-grad-print' checks[2]: stdout differs"),
        (161, 5, "step 'grad-function' solution: check 1 failed"),
    ]
    assert report.failed()


def test_dynamic_checks_are_skipped_for_lessons_that_do_not_load(broken_lessons: Path):
    seen: list[str] = []

    def fake_verify(lesson, *, runner, device="cpu"):
        seen.append(lesson.id)
        return []

    lint_paths([broken_lessons], verify=fake_verify, runner=None)
    assert "unknown-key" not in seen and "wrong-type" not in seen
    assert {"failing-solution", "fix-starter-passes", "duplicate-id"} <= set(seen)


def _honest_fake_verify(runs: list) -> object:
    """Reports, per code step it is given, each check reading a name the solution lacks
    (what a real run would echo) and a wrong literal `expected` (a real failure)."""

    def verify(lesson, *, runner, device="cpu"):
        runs.append(lesson)
        found = []
        for step in lesson.steps:
            for check in getattr(step, "checks", []):
                if getattr(check, "expr", "") and check.expr.split(".")[0] not in step.solution:
                    found.append(FakeSelfCheckProblem(step.id, "solution",
                                                      f"{check.expr} is not defined"))
                elif getattr(check, "expected", None) == 99:
                    found.append(FakeSelfCheckProblem(step.id, "solution",
                                                      f"{check.expr}: got 1, expected 99"))
        return found

    return verify


def test_one_pass_shows_every_problem_a_static_error_hides_nothing(write_lesson):
    """QA2 #3: a step with a static problem is still run (without the checks that problem
    condemns, which could only echo it), and a duplicate step id neither hides nor
    misplaces the second step's results."""
    first = _code_step("x = 1", "      - {kind: value, expr: x, expected: 99}\n"
                       "      - {kind: value, expr: w.grad}\n", step_id="ex1")
    twin = _code_step("z = 1", "      - {kind: value, expr: z, expected: 99}\n", step_id="ex1")
    path = write_lesson(HEAD + first + twin)
    runs: list = []
    report = lint_paths([path], verify=_honest_fake_verify(runs), runner=None)
    found = [(p.line, p.message) for p in report.problems]
    assert found == [
        (8, "step 'ex1' solution: x: got 1, expected 99"),
        (12, "check reads 'w', which the solution never defines"),
        (16, "duplicate step id 'ex1' (also on line 4)"),
        (20, "step 'ex1' solution: z: got 1, expected 99"),
    ]
    [lesson] = runs
    assert [len(step.checks) for step in lesson.steps] == [1, 1]  # the `w` check left out


def test_a_step_that_cannot_run_says_so(write_lesson):
    path = write_lesson(HEAD + _code_step("x = (", "      - {kind: value, expr: x}\n"))
    runs: list = []
    report = lint_paths([path], verify=_honest_fake_verify(runs), runner=None)
    messages = [p.format("f", "en") for p in report.problems]
    assert any("solution is not valid Python" in m for m in messages)
    assert "f:4:5: warning: step 's1': not run, because its solution is not valid Python " \
           "(see above); lint again once it parses" in messages
    assert runs[0].steps == []


def test_a_folder_without_lesson_files_is_not_a_clean_course(tmp_path: Path):
    # `tutor lint emptydir` used to print "0 lessons, 0 steps: all clean" and exit 0
    (tmp_path / "notes.txt").write_text("not a lesson\n", encoding="utf-8")
    with pytest.raises(TutorError) as caught:
        collect_files([tmp_path])
    assert "no lesson files" in str(caught.value) and caught.value.exit_code == 2


def _step_with_starter(starter_yaml: str) -> str:
    return (
        "  - id: s1\n"
        "    kind: fix\n"
        "    title: {en: Step, zh: 步骤}\n"
        "    prompt: {en: Do it., zh: 做吧。}\n"
        f"{starter_yaml}"
        "    solution: |\n"
        "      x = 1\n"
        "    checks:\n"
        "      - {kind: no_error}\n"
        f"{HINTS}"
    )


def test_translated_starter_may_differ_only_in_comments_and_strings(write_lesson):
    starter = (
        "    starter:\n"
        "      en: |\n"
        "        x = 1  # make it one\n"
        "        print('the value', x, f'of x: {x}')\n"
        "      zh: |\n"
        "        x = 1  # 让它等于一\n"
        "        # 多出来的一行注释\n"
        "        print('值', x, f'{x} 是 x 的值')\n"
    )
    assert _lint(write_lesson, HEAD + _step_with_starter(starter)) == []


def test_translated_starter_that_is_another_program_is_an_error_at_the_zh_line(write_lesson):
    starter = (
        "    starter:\n"
        "      en: |\n"
        "        x = 1\n"
        "        y = x + 2  # add two\n"
        "      zh: |\n"
        "        x = 1\n"
        "        # 加三\n"
        "        y = x + 3\n"
    )
    [(line, col, severity, message)] = _lint(write_lesson, HEAD + _step_with_starter(starter))
    assert severity == "error"
    assert (line, col) == (15, 9), "points at `y = x + 3` in the zh block"
    assert "different programs" in message
    assert "en line 2 `y = x + 2  # add two` vs zh line 3 `y = x + 3`" in message
    assert "only comments and strings may differ" in message


def test_translated_starter_missing_a_statement_says_which(write_lesson):
    starter = (
        "    starter:\n      en: |\n        x = 1\n        y = 2\n      zh: |\n        x = 1\n"
    )
    [(_, _, _, message)] = _lint(write_lesson, HEAD + _step_with_starter(starter))
    assert "en line 2 `y = 2` is missing in zh" in message


def test_plain_starter_with_english_comments_is_a_warning(write_lesson):
    plain = "    starter: |\n      x = 0\n      # compute the value here\n"
    [(line, _, severity, message)] = _lint(write_lesson, HEAD + _step_with_starter(plain))
    assert (line, severity) == (8, "warning")
    assert "starter: {en: ..., zh: ...}" in message
    # a name or a short tag is not prose, and code without comments needs no translation
    short = "    starter: |\n      x = 0  # TODO\n      y = x\n"
    assert _lint(write_lesson, HEAD + _step_with_starter(short)) == []


def test_zh_starter_with_english_comments_is_a_warning(write_lesson):
    starter = (
        "    starter:\n      en: |\n        x = 0  # compute the value here\n"
        "      zh: |\n        x = 0  # compute the value here, please\n"
    )
    [(_, _, severity, message)] = _lint(write_lesson, HEAD + _step_with_starter(starter))
    assert severity == "warning" and "still English" in message


def test_bundled_translated_starters_are_one_program_with_chinese_comments():
    from tutor.course import load_course
    from tutor.course.lint import code_comments, program_difference

    translated = 0
    for lesson in load_course().lessons:
        for step in lesson.steps:
            if step.kind not in ("code", "fix"):
                continue
            en, zh = step.starter_for("en"), step.starter_for("zh")
            if en == zh:
                assert not code_comments(en) or all(len(c.split()) < 3 for c in code_comments(en))
                continue
            translated += 1
            assert program_difference(en, zh) is None, step.id
            assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c) for c in code_comments(zh))
    assert translated >= 5


def test_a_starter_written_twice_untranslated_is_flagged(write_lesson):
    """QA2 #14: `starter: {en: X, zh: X}` with English comments is the plain-string case."""
    code = "x = 1\\n# compute y from x here\\n"
    starter = f'    starter: {{en: "{code}", zh: "{code}"}}\n'
    found = _lint(write_lesson, HEAD + _step_with_starter(starter))
    assert [(sev, msg) for _, _, sev, msg in found] == [
        ("warning", "starter comments are shown in English in both languages; write "
                    "starter: {en: ..., zh: ...} with the comments translated"),
    ]


def test_unknown_key_suggests_what_the_author_meant_without_repeating_it(write_lesson):
    """QA2 #15: `value:` on a value check means `expected:`; the path names the check once."""
    checks = "      - {kind: value, expr: x, value: 2}\n"
    [(_, _, _, message)] = _lint(write_lesson, HEAD + _code_step("x = 2", checks))
    assert message == "unknown key 'value' in steps[0].checks[0] (did you mean 'expected'?)"


def test_problem_lines_in_chinese(write_lesson):
    """QA2 #7: every problem line exists in zh; the English stays as it was."""
    text = (
        "id: demo\nsteps:\n"
        + _code_step("x = 1", "      - {kind: value, expr: w}\n").replace(
            "    title: {en: Step, zh: 步骤}\n", "    title: Step\n    quizz: 1\n")
    )
    report = lint_paths([write_lesson(text)])
    assert [p.format("f", "en") for p in report.problems] == [
        "f:1:1: missing required key 'title' in the lesson",
        "f:6:5: unknown key 'quizz' in steps[0]; allowed keys: cheats, checks, hints, id, kind, "
        "prompt, solution, starter, title, varied",
    ]
    assert [p.format("f", "zh") for p in report.problems] == [
        "f:1:1: 课程的顶层缺少必需的键 'title'",
        "f:6:5: steps[0] 中有未知的键 'quizz'；允许的键：cheats, checks, hints, id, kind, prompt, "
        "solution, starter, title, varied",
    ]
    loaded = write_lesson(HEAD + _code_step("x = 1", "      - {kind: value, expr: w}\n",
                                            hints=""), "two.yaml")
    zh = [p.format("f", "zh") for p in lint_paths([loaded]).problems]
    assert zh == [
        "f:4:5: 警告：步骤 's1'：只有 0 条提示；练习至少应有 2 条（先温和，再具体）",
        "f:11:29: 检查读取 'w'，但参考答案从未定义它",
    ]
