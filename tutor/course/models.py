"""The lesson format: the one source of truth for lesson YAML.

The models are records (:mod:`tutor.records`): frozen dataclasses that pydantic validates and
describes. ``tutor schema`` prints the JSON Schema derived from :class:`Lesson`. Every model
forbids unknown keys so a typo in a lesson is an error, not a silently ignored field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from tutor.i18n import BiText, Lang
from tutor.records import Deferred, Record

IDENTIFIER = {"pattern": r"^[a-z0-9][a-z0-9_-]*$", "max_length": 64}
"""Lesson and step ids: lowercase slugs, used in file names and ``LESSON/STEP`` references
(pydantic's ``Field`` arguments, as a field's metadata)."""

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


def _tagged_by_kind() -> Any:
    """Checks and steps are unions told apart by their ``kind`` (a discriminated union)."""
    from pydantic import Discriminator  # here: pydantic stays off the first screen (records)

    return Discriminator("kind")


# --------------------------------------------------------------------------- checks


VARIED_CHECK_DESCRIPTION = (
    "Also graded on hidden varied inputs (the default, for a value compared with the "
    "solution's, or the output with `same_as_solution`): the program runs again with its "
    "leaves that require grad started from other values (the solution too), and the two must "
    "still agree, so an answer written down fails. false where the value is genuinely fixed "
    "whatever the inputs."
)


@dataclass(frozen=True, kw_only=True)
class _CheckBase(Record):
    points: int = field(
        default=1, metadata={"ge": 0, "description": "Weight of this check in the step's score."}
    )
    label: BiText | None = field(
        default=None, metadata={"description": "Name shown to the learner; derived if omitted."}
    )


@dataclass(frozen=True, kw_only=True)
class ValueCheck(_CheckBase):
    """The value of ``expr`` after the learner's code ran equals the expected value.

    Without ``expected`` the truth is the value of ``expr`` after the reference solution ran.
    """

    kind: Literal["value"]
    expr: str = field(
        metadata={"description": "Python expression evaluated in the learner's namespace."}
    )
    expected: Any = field(default=None, metadata={
        "description": "A literal (number, nested list, bool, string); omit to use the solution."
    })
    rtol: float = 1e-5
    atol: float = 1e-6
    check_dtype: bool = field(
        default=False, metadata={"description": "Also require the same dtype."}
    )
    varied: bool = field(default=True, metadata={"description": VARIED_CHECK_DESCRIPTION})


AttributeName = Literal[
    "requires_grad", "is_leaf", "grad_fn", "grad_is_none", "shape", "dtype", "device"
]


@dataclass(frozen=True, kw_only=True)
class AttributeCheck(_CheckBase):
    """An autograd attribute of the tensor ``expr``: ``requires_grad``, ``is_leaf``,
    ``grad_fn`` (the node's class name, e.g. ``MmBackward0``, or null), ``grad_is_none``,
    ``shape``, ``dtype``, ``device``. Without ``expected`` the solution's value is used."""

    kind: Literal["attribute"]
    expr: str
    attribute: AttributeName
    expected: Any = None


@dataclass(frozen=True, kw_only=True)
class ErrorCheck(_CheckBase):
    """The code raises: optionally of exception ``type`` and with a message matching ``match``."""

    kind: Literal["error"]
    type: str | None = field(
        default=None, metadata={"description": "Exception class name, e.g. RuntimeError."}
    )
    match: str | None = field(
        default=None, metadata={"description": "Regular expression searched in the message."}
    )


@dataclass(frozen=True, kw_only=True)
class NoErrorCheck(_CheckBase):
    """The code runs to the end without an exception."""

    kind: Literal["no_error"]


@dataclass(frozen=True, kw_only=True)
class StdoutCheck(_CheckBase):
    """What the code prints: contains ``contains``, matches ``regex``, or equals the solution's."""

    kind: Literal["stdout"]
    contains: str | None = None
    regex: str | None = None
    same_as_solution: bool = False
    varied: bool = field(default=True, metadata={"description": VARIED_CHECK_DESCRIPTION})


AstRule = Literal[
    "calls_backward",
    "uses_no_grad",
    "no_grad_assignment",
    "no_data_attribute",
    "grad_from_backward",
    "calls",
    "does_not_call",
]


@dataclass(frozen=True, kw_only=True)
class AstCheck(_CheckBase):
    """A rule on the learner's source, checked on its syntax tree (never by running it).

    ``grad_from_backward``: gradients must come from ``backward()``/``torch.autograd.grad``
    and ``.grad`` is never assigned by hand. ``calls``/``does_not_call`` take ``name``
    (a function or method name such as ``detach`` or ``torch.mm``).
    """

    kind: Literal["ast"]
    rule: AstRule
    name: str | None = None
    times: int = field(default=1, metadata={"ge": 1, "description": (
        "For `calls`: how many calls of `name` the code must make at least (e.g. two "
        "backward passes that must stay two).")})


@dataclass(frozen=True, kw_only=True)
class FunctionCheck(_CheckBase):
    """Calls the learner's function ``function`` on hidden inputs after the code ran.

    Each case is a Python argument list (``"torch.tensor([1., 2.]), 3"``); the result is
    compared with what the reference solution's function returns for the same case.
    """

    kind: Literal["function"]
    function: str
    cases: list[str] = field(metadata={"min_length": 1})
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
    Deferred(_tagged_by_kind),
]

# --------------------------------------------------------------------------- steps


@dataclass(frozen=True, kw_only=True)
class _StepBase(Record):
    id: str = field(metadata=IDENTIFIER)
    title: BiText
    hints: list[BiText] = field(default_factory=list, metadata={
        "description": "Revealed one at a time, from gentle to specific."
    })


@dataclass(frozen=True, kw_only=True)
class ReadingStep(_StepBase):
    """Markdown to read."""

    kind: Literal["reading"]
    body: BiText


STARTER_DESCRIPTION = (
    "Code the learner starts from: one program for both languages, or {en: ..., zh: ...} "
    "when its comments (or strings) are translated; the two must be the same program."
)


CHEATS_DESCRIPTION = (
    "Programs that must not pass, beyond those tutor lint derives itself (the untouched "
    "starter, the solution without a key line, hard-coded values, an error raised by hand): "
    "e.g. the task done with the API the step forbids."
)


VARIED_STEP_DESCRIPTION = (
    "Grade the step's value and output checks on hidden varied inputs too (see a check's "
    "`varied`); false for a step whose values are all genuinely fixed (an expected error, "
    "printed text)."
)


@dataclass(frozen=True, kw_only=True)
class _Exercise(_StepBase):
    """What code and fix steps share: a prompt, starter code in the learner's language, the
    reference solution and the checks it passes.

    The YAML key ``starter`` is stored as the bilingual ``starters``; ``starter`` stays the
    English code, so code written before starters were translated keeps working.
    """

    starters: BiText = field(metadata={"alias": "starter", "description": STARTER_DESCRIPTION})
    kind: str  # each step's own Literal; declared here to keep the published field order
    prompt: BiText
    solution: str
    checks: list[Check] = field(metadata={"min_length": 1})
    cheats: list[str] = field(default_factory=list, metadata={"description": CHEATS_DESCRIPTION})
    varied: bool = field(default=True, metadata={"description": VARIED_STEP_DESCRIPTION})

    @property
    def starter(self) -> str:
        return self.starters.en

    def starter_for(self, lang: Lang) -> str:
        return self.starters.get(lang)

    def is_starter(self, code: str) -> bool:
        """Is ``code`` the starter, untouched, in either language (trailing blanks aside)?"""
        return code.rstrip() in (self.starters.en.rstrip(), self.starters.zh.rstrip())


@dataclass(frozen=True, kw_only=True)
class CodeStep(_Exercise):
    """Write code that passes the checks; ``solution`` is the reference (truth from torch)."""

    # Optional here. The default is the YAML form (""), which pydantic validates into a Text
    # (validate_default) and the schema shows as authors write it.
    starters: BiText = field(default="", metadata={  # type: ignore[assignment]
        "alias": "starter", "validate_default": True, "description": STARTER_DESCRIPTION
    })
    kind: Literal["code"]


@dataclass(frozen=True, kw_only=True)
class FixStep(_Exercise):
    """Fix the bug: ``starter`` must fail (raise, or fail a check); ``solution`` passes."""

    kind: Literal["fix"]


@dataclass(frozen=True, kw_only=True)
class Choice(Record):
    text: BiText
    correct: bool = False
    explanation: BiText = field(metadata={"description": "Why this choice is right or wrong."})


@dataclass(frozen=True, kw_only=True)
class QuizStep(_StepBase):
    """Single or multiple choice."""

    kind: Literal["quiz"]
    prompt: BiText
    choices: list[Choice] = field(metadata={"min_length": 2})
    multiple: bool = field(
        default=False, metadata={"description": "More than one choice may be correct."}
    )


@dataclass(frozen=True, kw_only=True)
class AnswerStep(_StepBase):
    """The learner types a value (e.g. ``x.grad``); the truth comes from running ``code``."""

    kind: Literal["answer"]
    prompt: BiText
    code: str = field(
        metadata={"description": "Code shown to the learner and run to get the truth."}
    )
    expr: str = field(metadata={"description": "The expression whose value the learner types."})
    cross_check: Any = field(default=None, metadata={
        "description": "Optional literal the lint compares with torch's value."
    })
    rtol: float = 1e-4
    atol: float = 1e-6


Step = Annotated[
    ReadingStep | CodeStep | FixStep | QuizStep | AnswerStep,
    Deferred(_tagged_by_kind),
]
GradedStep = CodeStep | FixStep | QuizStep | AnswerStep
RunnableStep = CodeStep | FixStep

# --------------------------------------------------------------------------- lessons


@dataclass(frozen=True, kw_only=True)
class Lesson(Record):
    """One lesson: one YAML file in ``lessons/``."""

    id: str = field(metadata=IDENTIFIER)
    title: BiText
    summary: BiText | None = None
    topics: list[Topic] = field(
        default_factory=list, metadata={"description": "Source-text topics covered."}
    )
    steps: list[Step] = field(metadata={"min_length": 1})

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)


@dataclass(frozen=True, kw_only=True)
class Course(Record):
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
