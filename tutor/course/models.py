"""The lesson format: pydantic models, the one source of truth for lesson YAML.

``tutor schema`` prints the JSON Schema derived from :class:`Lesson`. Every model forbids
unknown keys so a typo in a lesson is an error, not a silently ignored field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import BiText, Lang, Text

Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
"""Lesson and step ids: lowercase slugs, used in file names and ``LESSON/STEP`` references."""

Topic = Literal[
    "requires_grad",
    "graph",
    "backward",
    "grad_accumulation",
    "non_scalar_backward",
    "mm_retain_graph",
    "detach",
    "no_grad",
    "data_norm",
    "nn_module",
    "devices",
    "errors",
    "review",
]
"""Topics of the source text (``shared/seed``) a lesson can cover."""


class StrictModel(BaseModel):
    # serialize_by_alias: a dump (the lesson cache) reads back as the YAML keys it came from
    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)


# --------------------------------------------------------------------------- checks


class _CheckBase(StrictModel):
    points: int = Field(1, ge=0, description="Weight of this check in the step's score.")
    label: BiText | None = Field(None, description="Name shown to the learner; derived if omitted.")


class ValueCheck(_CheckBase):
    """The value of ``expr`` after the learner's code ran equals the expected value.

    Without ``expected`` the truth is the value of ``expr`` after the reference solution ran.
    """

    kind: Literal["value"]
    expr: str = Field(description="Python expression evaluated in the learner's namespace.")
    expected: Any = Field(
        None, description="A literal (number, nested list, bool, string); omit to use the solution."
    )
    rtol: float = 1e-5
    atol: float = 1e-6
    check_dtype: bool = Field(False, description="Also require the same dtype.")


AttributeName = Literal[
    "requires_grad", "is_leaf", "grad_fn", "grad_is_none", "shape", "dtype", "device"
]


class AttributeCheck(_CheckBase):
    """An autograd attribute of the tensor ``expr``: ``requires_grad``, ``is_leaf``,
    ``grad_fn`` (the node's class name, e.g. ``MmBackward0``, or null), ``grad_is_none``,
    ``shape``, ``dtype``, ``device``. Without ``expected`` the solution's value is used."""

    kind: Literal["attribute"]
    expr: str
    attribute: AttributeName
    expected: Any = None


class ErrorCheck(_CheckBase):
    """The code raises: optionally of exception ``type`` and with a message matching ``match``."""

    kind: Literal["error"]
    type: str | None = Field(None, description="Exception class name, e.g. RuntimeError.")
    match: str | None = Field(None, description="Regular expression searched in the message.")


class NoErrorCheck(_CheckBase):
    """The code runs to the end without an exception."""

    kind: Literal["no_error"]


class StdoutCheck(_CheckBase):
    """What the code prints: contains ``contains``, matches ``regex``, or equals the solution's."""

    kind: Literal["stdout"]
    contains: str | None = None
    regex: str | None = None
    same_as_solution: bool = False


AstRule = Literal[
    "calls_backward",
    "uses_no_grad",
    "no_grad_assignment",
    "no_data_attribute",
    "grad_from_backward",
    "calls",
    "does_not_call",
]


class AstCheck(_CheckBase):
    """A rule on the learner's source, checked on its syntax tree (never by running it).

    ``grad_from_backward``: gradients must come from ``backward()``/``torch.autograd.grad``
    and ``.grad`` is never assigned by hand. ``calls``/``does_not_call`` take ``name``
    (a function or method name such as ``detach`` or ``torch.mm``).
    """

    kind: Literal["ast"]
    rule: AstRule
    name: str | None = None


class FunctionCheck(_CheckBase):
    """Calls the learner's function ``function`` on hidden inputs after the code ran.

    Each case is a Python argument list (``"torch.tensor([1., 2.]), 3"``); the result is
    compared with what the reference solution's function returns for the same case.
    """

    kind: Literal["function"]
    function: str
    cases: list[str] = Field(min_length=1)
    rtol: float = 1e-5
    atol: float = 1e-6


Check = Annotated[
    ValueCheck
    | AttributeCheck
    | ErrorCheck
    | NoErrorCheck
    | StdoutCheck
    | AstCheck
    | FunctionCheck,
    Field(discriminator="kind"),
]

# --------------------------------------------------------------------------- steps


class _StepBase(StrictModel):
    id: Identifier
    title: BiText
    hints: list[BiText] = Field(
        default_factory=list, description="Revealed one at a time, from gentle to specific."
    )


class ReadingStep(_StepBase):
    """Markdown to read."""

    kind: Literal["reading"]
    body: BiText


STARTER_DESCRIPTION = (
    "Code the learner starts from: one program for both languages, or {en: ..., zh: ...} "
    "when its comments (or strings) are translated; the two must be the same program."
)


class _Exercise:
    """Starter code in the learner's language, for code and fix steps.

    The YAML key ``starter`` is stored as the bilingual ``starters``; ``starter`` stays the
    English code, so code written before starters were translated keeps working.
    """

    starters: Text

    @property
    def starter(self) -> str:
        return self.starters.en

    def starter_for(self, lang: Lang) -> str:
        return self.starters.get(lang)

    def is_starter(self, code: str) -> bool:
        """Is ``code`` the starter, untouched, in either language (trailing blanks aside)?"""
        return code.rstrip() in (self.starters.en.rstrip(), self.starters.zh.rstrip())


class CodeStep(_Exercise, _StepBase):
    """Write code that passes the checks; ``solution`` is the reference (truth from torch)."""

    kind: Literal["code"]
    prompt: BiText
    starters: BiText = Field(
        "", alias="starter", validate_default=True, description=STARTER_DESCRIPTION
    )
    solution: str
    checks: list[Check] = Field(min_length=1)


class FixStep(_Exercise, _StepBase):
    """Fix the bug: ``starter`` must fail (raise, or fail a check); ``solution`` passes."""

    kind: Literal["fix"]
    prompt: BiText
    starters: BiText = Field(alias="starter", description=STARTER_DESCRIPTION)
    solution: str
    checks: list[Check] = Field(min_length=1)


class Choice(StrictModel):
    text: BiText
    correct: bool = False
    explanation: BiText = Field(description="Why this choice is right or wrong.")


class QuizStep(_StepBase):
    """Single or multiple choice."""

    kind: Literal["quiz"]
    prompt: BiText
    choices: list[Choice] = Field(min_length=2)
    multiple: bool = Field(False, description="More than one choice may be correct.")


class AnswerStep(_StepBase):
    """The learner types a value (e.g. ``x.grad``); the truth comes from running ``code``."""

    kind: Literal["answer"]
    prompt: BiText
    code: str = Field(description="Code shown to the learner and run to get the truth.")
    expr: str = Field(description="The expression whose value the learner types.")
    cross_check: Any = Field(
        None, description="Optional literal the lint compares with torch's value."
    )
    rtol: float = 1e-4
    atol: float = 1e-6


Step = Annotated[
    ReadingStep | CodeStep | FixStep | QuizStep | AnswerStep,
    Field(discriminator="kind"),
]
GradedStep = CodeStep | FixStep | QuizStep | AnswerStep
RunnableStep = CodeStep | FixStep

# --------------------------------------------------------------------------- lessons


class Lesson(StrictModel):
    """One lesson: one YAML file in ``lessons/``."""

    id: Identifier
    title: BiText
    summary: BiText | None = None
    topics: list[Topic] = Field(default_factory=list, description="Source-text topics covered.")
    steps: list[Step] = Field(min_length=1)

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)


class Course(StrictModel):
    """Lessons in order (file name order)."""

    lessons: list[Lesson]

    def lesson(self, lesson_id: str) -> Lesson:
        for lesson in self.lessons:
            if lesson.id == lesson_id:
                return lesson
        raise KeyError(lesson_id)

    def find(self, ref: str) -> tuple[Lesson, Step]:
        """Look up ``LESSON/STEP``; raises ``KeyError`` naming what is missing."""
        lesson_id, _, step_id = ref.partition("/")
        lesson = self.lesson(lesson_id)
        return lesson, lesson.step(step_id)
