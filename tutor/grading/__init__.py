"""Checks -> verdicts; truth from running reference solutions; batch grading; reports.

CONTRACT (public API, implemented by the grading work)::

    grade_step(lesson: Lesson, step: CodeStep | FixStep, code: str, *, runner: Runner,
               device: str = "cpu", cache: ExpectedCache | None = None) -> Verdict
    grade_answer(lesson, step: AnswerStep, typed: str, *, runner, device="cpu",
                 cache=None) -> Verdict
    grade_quiz(lesson, step: QuizStep, selected: Sequence[int]) -> Verdict
    parse_answer(typed: str) -> ParsedAnswer       # safe, no eval; raises AnswerSyntaxError
    ExpectedCache(directory: Path | None)          # on-disk cache of solution runs
"""
