"""The diagnosis catalog as validated data: what identifies a mistake, and how to explain it.

``catalog.yaml`` is the one place where diagnoses are written; these models check it on load
(unknown keys, bad regexes and unknown placeholders are errors with the entry's id).
"""

from __future__ import annotations

import re
import string
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tutor.diagnosis.models import Severity
from tutor.errors import TutorError
from tutor.i18n import BiText, Text
from tutor.yaml_read import YamlFileError, read_yaml

CATALOG_PATH = Path(__file__).with_name("catalog.yaml")

BASE_PLACEHOLDERS = frozenset(
    {
        "var",  # display form of the variable the failing call was made on: `loss`
        "var_code",  # the same as code, for snippets: loss
        "var2",  # second operand of a binary call (torch.mm(a, b) -> `b`)
        "var2_code",
        "var_base",  # var without trailing reshapes: target.view(4, 1) -> `target`
        "var_base_code",
        "shape",  # of var, from the failing frame's locals: (4,)
        "dtype",
        "device",
        "requires_grad",
        "grad_fn",
        "shape2",
        "dtype2",
        "line",
        "call",  # the failing call as written: self.fc1(x)
        "callee",  # what was called: self.fc1
    }
)
"""Placeholders the engine fills from the run; regex named groups add more per entry."""

FACT_PLACEHOLDERS = frozenset(
    {
        "built_self",  # the subject, computed only before the loop that differentiates it
        "built_part",  # a tensor of the subject's graph computed only before that loop
        "built_line",  # the line that computed it
        "tensor",  # the subject, where the run (or a tensor method called on it) shows it
        "tensor_code",  # is a tensor, not a list or a number; the same as code
        "backward_line",  # the backward() the evidence saw adding to .grad
    }
)
"""Facts of the source's data flow a message entry's words may state: filled only when the
flow (or the evidence's check, which then fills them for both the text and the chain)
established them; a text that needs one that was not established is not used."""

EVIDENCE_PLACEHOLDERS = frozenset(
    {
        "line", "name", "model", "optimizer", "lr", "param", "params", "op", "module",
        "first_use", "loss_first", "loss_last", "fail_line", "criterion", "count",
        "detail", "shape", "target_shape", "target", "numel", "dtype", "label", "low", "high",
        "why", "given",
        "train_line",  # a model.train() that undoes an eval() (or stands for the missing one)
        "expr", "dim",  # shape provenance: the learner's expression of an op, a dimension
        "before_line",  # an activation applied twice: where the first one ran
        "wanted", "new",  # the kind of value a call wants, the converted argument
        "value", "values",  # a non-finite value (nan, inf), what the op that made it was given
        "term_line", "sum_line", "backward_line",  # a loss term, the sum, the backward()
        "helper",  # a function of the program that replaced a model's layers
        "class_line",  # where the program defines a class a message names
        "condition", "step_line",  # the test guarding an optimizer's step, the step's line
        "rate",  # a dropout rate as the program writes it
        "function", "callee",  # a function of the program, and what a call in it runs
        "layer_line",  # where a layer the failing line reaches was built
    }
)
"""Placeholders an evidence check fills (entries with ``check``, and evidence steps)."""

DtypeKind = Literal["integer", "floating", "bool", "complex"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Conditions(_Strict):
    """Facts about the run or the learner's source that pick a variant. All given must hold.

    "source" means the statements that produced ``var`` (a backward slice over assignments).
    """

    line_calls: list[str] | None = Field(
        None, description="The failing line calls one of these (last name part: 'mm', 'numpy')."
    )
    line_not_calls: list[str] | None = None
    line_has_matmul_operator: bool | None = Field(None, description="The line uses `@`.")
    line_calls_module: bool | None = Field(
        None, description="The failing call is on a module-like callee (self.fc1(x), net(x))."
    )
    none_is_grad: bool | None = Field(
        None, description="The None in a NoneType error is an `X.grad` on the failing line."
    )
    line_in_no_grad: bool | None = Field(None, description="Inside `with torch.no_grad()`.")
    line_in_loop: bool | None = None
    line_is_inplace_update: bool | None = Field(
        None, description="An in-place update (`w -= ...`, `w.sub_(...)`) using `.grad`."
    )
    source_calls: list[str] | None = Field(
        None, description="The source of var calls one of these methods/functions."
    )
    source_in_no_grad: bool | None = Field(
        None, description="Part of the source of var was computed inside no_grad/inference_mode."
    )
    source_defined_outside_loop: bool | None = Field(
        None, description="var was last assigned outside the loop that holds the failing line."
    )
    source_has_requires_grad: bool | None = Field(
        None, description="Some tensor in the source of var was made to require grad."
    )
    code_sets_requires_grad_false: bool | None = None
    var_dtype: DtypeKind | None = Field(None, description="From the failing frame's locals.")
    var_dtype_is: list[str] | None = Field(
        None, description="var's exact dtype is one of these ('torch.float64'), from the locals."
    )
    var_is_leaf: bool | None = None
    var_requires_grad: bool | None = None
    message_types_differ_in_device: bool | None = Field(
        None, description="The two tensor types in the message differ in 'cuda'."
    )


class Match(_Strict):
    """What identifies the mistake: an exception or a warning, with a message regex."""

    exception: list[str] | None = Field(None, description="Exception class names.")
    warning: list[str] | None = Field(None, description="Warning category names.")
    message: str = Field(description="Regex searched in the message; named groups fill text.")
    ignore_case: bool = False
    shapes: list[str] = Field(
        default_factory=list,
        description="Named groups holding a shape as torch prints it ('3, 4', '[3, 4]', "
        "'torch.Size([3, 4])', '2 x 2'): filled in as (3, 4) like every other shape.",
    )

    @field_validator("message")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"bad regex {value!r}: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Match:
        if (self.exception is None) == (self.warning is None):
            raise ValueError("give exactly one of 'exception' or 'warning'")
        return self

    @model_validator(mode="after")
    def _shape_groups(self) -> Match:
        unknown = set(self.shapes) - set(self.pattern().groupindex)
        if unknown:
            raise ValueError(f"shapes names groups the regex does not have: {sorted(unknown)}")
        return self

    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.message, re.IGNORECASE if self.ignore_case else 0)


PitfallRule = Literal[
    "missing-zero-grad",
    "data-attribute",
    "nonleaf-grad-read",
    "backward-in-no-grad",
    "requires-grad-too-late",
    "result-discarded",
    "state-dict-kept",
    "normalize-precedence",
]


TextField = Literal["title", "explanation", "fix"]
TEXT_FIELDS: tuple[TextField, ...] = ("title", "explanation", "fix")


class Variant(_Strict):
    """The entry's words for a run that did not show a fact they use: each field given here
    replaces the entry's own when one of its placeholders is not known."""

    title: BiText | None = None
    explanation: BiText | None = None
    fix: BiText | None = None


class Entry(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    severity: Severity
    match: Match | None = Field(None, description="For errors and warnings.")
    pitfall: PitfallRule | None = Field(None, description="For static pitfalls: the AST rule.")
    check: str | None = Field(
        None, pattern=r"^[a-z0-9][a-z0-9-]*$",
        description="For mistakes found from evidence (tutor.diagnosis.checks): the check.")
    focus: list[str] = Field(
        default_factory=list,
        description="Calls whose operands are the subject ('backward', 'mm', '@', '.grad').",
    )
    subject: Literal["first", "second", "either"] = Field(
        "first",
        description="Which operand of the focus call is {var}: 'second' for a loss's target, "
        "'either' when the conditions pick it (the integer operand of a matrix product).",
    )
    conditions: Conditions = Field(default_factory=lambda: Conditions.model_validate({}))
    generic: bool = Field(
        False, description="An honest non-specific diagnosis (evidence entries): it names the "
        "symptom the re-run saw and what to check, not a cause the evidence does not pin.")
    untried_fix: bool = Field(
        False, description="Errors: the fix is sound without a trial (the message's facts "
        "settle it, e.g. a label of -1 is padding: ignore_index), so it is shown even when no "
        "trial checked it; other message entries then only say where to look.")
    covered_by: list[str] = Field(
        default_factory=list,
        description="Warning or pitfall: not reported when one of these ids was already given.",
    )
    title: BiText
    explanation: BiText
    fix: BiText
    variants: list[Variant] = Field(
        default_factory=list,
        description="Words without a fact the entry's own words use, tried in order when "
        "that fact is not known: a learner never sees a placeholder.")
    lesson_ref: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9_-]*$")
    summary: BiText | None = Field(
        None,
        description="The mistake in one or two run-independent sentences (no placeholders): "
        "how the tutor chat explains it as general advice, where no run fills the templates.",
    )

    def options(self, field: TextField) -> list[Text]:
        """The words for ``field``: the entry's own, then each variant's, in order; after
        them, each of those whose snippets start with the subject (`{var_code}.sum()`) read
        without it (`.sum()`), for a run that did not name the subject."""
        own: Text = getattr(self, field)
        written = [own, *(t for v in self.variants if (t := getattr(v, field)) is not None)]
        return written + [t for t in map(_without_subject, written) if t is not None]

    @model_validator(mode="after")
    def _consistent(self) -> Entry:
        if self.check is not None:
            if self.match is not None or self.pitfall is not None:
                raise ValueError("an evidence entry names its 'check' and no 'match'/'pitfall'")
            self._known_placeholders(EVIDENCE_PLACEHOLDERS, frozenset())
            return self
        if self.severity == "pitfall":
            if self.pitfall is None or self.match is not None:
                raise ValueError("a pitfall names its 'pitfall' rule and has no 'match'")
        elif self.match is None or self.pitfall is not None:
            raise ValueError("an error or warning entry has a 'match' and no 'pitfall'")
        if self.severity == "warning" and self.match and self.match.warning is None:
            raise ValueError("a warning entry matches a 'warning' category")
        if self.severity == "error" and self.match and self.match.exception is None:
            raise ValueError("an error entry matches an 'exception' type")
        allowed = BASE_PLACEHOLDERS | FACT_PLACEHOLDERS | set(
            self.match.pattern().groupindex if self.match is not None else ()
        )
        shapes = {"shape", "shape2"} | set(self.match.shapes if self.match is not None else ())
        self._known_placeholders(allowed, frozenset(shapes))
        if self.summary is not None:
            for lang_text in (self.summary.en, self.summary.zh):
                if placeholders(lang_text):
                    raise ValueError("summary is read without a run: it has no placeholders")
        return self

    def _known_placeholders(self, allowed: frozenset[str] | set[str],
                            shapes: frozenset[str]) -> None:
        """Every placeholder of every text (variants too) is one the engine fills; a shape
        placeholder is never wrapped in brackets (it brings its own: (3,))."""
        for field in TEXT_FIELDS:
            for words in self.options(field):
                for lang_text in (words.en, words.zh):
                    unknown = placeholders(lang_text) - allowed
                    if unknown:
                        raise ValueError(f"{field} uses unknown placeholders {sorted(unknown)}")
                    for name in shapes:
                        if re.search(r"[\[(（]" + re.escape("{" + name + "}") + r"[\])）]",
                                     lang_text):
                            raise ValueError(
                                f"{field} wraps {{{name}}} in brackets: a shape placeholder "
                                "brings its own parentheses, (3,)")


SUBJECT_CODE = ("var_code", "var_base_code", "var2_code")
_SUBJECT_SNIPPET = re.compile(r"`\{(?:" + "|".join(SUBJECT_CODE) + r")\}\.")


def _without_subject(text: Text) -> Text | None:
    """The text with every snippet that starts with the subject's code starting at its
    method instead ("`{var_code}.sum()`" -> "`.sum()`"); None when it names the subject's
    code another way too (``{var_code} = {var_code} + 1``), or not at all."""
    out = []
    for words in (text.en, text.zh):
        bare = _SUBJECT_SNIPPET.sub("`.", words)
        if placeholders(bare) & set(SUBJECT_CODE):
            return None
        out.append(bare)
    return None if out == [text.en, text.zh] else Text(en=out[0], zh=out[1])


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


class Surrogate(_Strict):
    """A differentiable stand-in for an op whose result has no gradient."""

    form: str = Field(description="The replacement: {x} is what the op applies to, {rest} "
                      "its other arguments, {other} a comparison's other side.")
    why: BiText = Field(description="What the stand-in does, for the fix's text.")
    relaxes: bool = Field(False, description="A soft version of the op's own values (a "
                          "sigmoid for a comparison): its values differ from the op's by "
                          "design. Otherwise a tried stand-in must compute the loss the "
                          "program computed (it only lets the gradient through).")
    direction: BiText | None = Field(None, description="What to do instead, in words, when "
                                     "no stand-in keeps what the program computes.")

    @field_validator("form")
    @classmethod
    def _known_fields(cls, form: str) -> str:
        unknown = placeholders(form) - {"x", "rest", "other"}
        if unknown:
            raise ValueError(f"form uses unknown placeholders {sorted(unknown)}")
        return form


class Catalog(_Strict):
    entries: list[Entry] = Field(min_length=1)
    steps: dict[str, BiText] = Field(
        default_factory=dict,
        description="Templates of the evidence chain's steps, by step id (checks fill them).")
    step_variants: dict[str, list[BiText]] = Field(
        default_factory=dict,
        description="A step's words without a fact the run may not show (a name the learner "
        "never gave the value), tried in order after the step's own.")
    surrogates: dict[str, Surrogate] = Field(
        default_factory=dict, description="Differentiable stand-ins, by the op they replace.")

    @model_validator(mode="after")
    def _unique(self) -> Catalog:
        seen: set[str] = set()
        for entry in self.entries:
            if entry.id in seen:
                raise ValueError(f"duplicate diagnosis id {entry.id!r}")
            seen.add(entry.id)
        return self

    def get(self, entry_id: str) -> Entry:
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        raise KeyError(entry_id)

    def where(self, severity: Severity | None = None, *,
              rule: Literal["pitfall", "check"] | None = None
              ) -> list[Entry]:
        """The entries of a severity, in order; with ``rule`` ("pitfall" or "check") only
        those picked by a static rule or by an evidence check."""
        return [e for e in self.entries if severity in (None, e.severity)
                and (rule is None or getattr(e, rule) is not None)]

    @property
    def errors(self) -> list[Entry]:
        """The entries a raised error's message picks (an error found from evidence has a
        ``check`` instead)."""
        return [e for e in self.where("error") if e.match is not None]

    @property
    def warnings(self) -> list[Entry]:
        return [e for e in self.where("warning") if e.match is not None]

    @property
    def pitfalls(self) -> list[Entry]:
        return self.where("pitfall", rule="pitfall")

    @property
    def checks(self) -> list[Entry]:
        return self.where(rule="check")

    def step_options(self, key: str) -> list[Text]:
        """The step's words, then its variants (each without some fact); empty for a step
        the catalog does not have."""
        return [self.steps[key], *self.step_variants.get(key, [])] if key in self.steps \
            else []

    @model_validator(mode="after")
    def _steps_fill(self) -> Catalog:
        texts = [(key, text) for key, text in self.steps.items()]
        for key, variants in self.step_variants.items():
            if key not in self.steps:
                raise ValueError(f"step_variants: {key!r} is not a step")
            texts.extend((key, text) for text in variants)
        for key, text in texts:
            for lang_text in (text.en, text.zh):
                unknown = placeholders(lang_text) - EVIDENCE_PLACEHOLDERS
                if unknown:
                    raise ValueError(f"step {key!r} uses unknown placeholders {sorted(unknown)}")
        return self


class CatalogError(TutorError):
    """The catalog file is broken: names the file and the problem."""


def parse_catalog(path: Path) -> Catalog:
    try:
        data = read_yaml(path)
    except (OSError, YamlFileError) as exc:
        raise CatalogError(f"{path}: cannot read the diagnosis catalog: {exc}") from exc
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(f"{path}: invalid diagnosis catalog:\n{exc}") from exc


@cache
def load_catalog() -> Catalog:
    """The bundled catalog, parsed and validated once per process."""
    return parse_catalog(CATALOG_PATH)
