"""Data of the tutor chat: what it answers and what it retrieves (what it knows of the
learner's run is :mod:`tutor.chat.context`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.i18n import BiText, Lang, Text


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


AnswerKind = Literal["answer", "context", "hint", "off_topic", "empty"]


class Source(Frozen):
    """Where part of an answer comes from, as a learner reads it (the TUI lists these)."""

    id: str = Field(description="The source id, as in Answer.sources.")
    title: Text = Field(description="What it is called: the passage's or diagnosis's title.")
    where: Text | None = Field(
        default=None,
        description="The lesson (and step) that teaches it, when not the title itself.",
    )

    def label(self, lang: Lang) -> str:
        title = self.title.get(lang)
        if self.where is None:
            return title
        return f"{title}（{self.where.zh}）" if lang == "zh" else f"{title} ({self.where.en})"


class Answer(Frozen):
    text: str
    sources: list[str] = Field(
        default_factory=list, description="'LESSON/STEP' or 'glossary:ID' / 'catalog:ID'."
    )
    titled_sources: list[Source] = Field(
        default_factory=list,
        description="The same sources with learner-readable titles (see sources_for).",
    )
    refused: bool = Field(default=False, description="A solution request or off-topic question.")
    hint_level: int | None = Field(default=None, description="1-based hint level given, if any.")
    fallback_notice: str | None = Field(
        default=None, description="Why the LLM answer was not used (error, timeout, leak)."
    )
    kind: AnswerKind = "answer"
    lessons: list[str] = Field(
        default_factory=list,
        description="The lessons the text names (Read and See also lines), best first.",
    )
    redacted: bool = Field(default=False, description="Something was removed because it leaked.")

    def sources_for(self, lang: Lang) -> list[str]:
        """The sources as a learner reads them (lesson and step titles, not ids), once each;
        an id with no title known is left out rather than shown raw."""
        out: list[str] = []
        for source in self.titled_sources:
            label = source.label(lang)
            if label not in out:
                out.append(label)
        return out


PassageSource = Literal["lesson", "glossary", "catalog"]


class Passage(Frozen):
    """One retrievable unit: a lesson step (or part), a glossary entry or a catalog entry."""

    id: str
    source: PassageSource
    lesson_id: str | None = None
    step_id: str | None = None
    title: Text
    text: Text
    code: str | None = None
    code_zh: str | None = Field(
        default=None,
        description="The example with Chinese comments, shown in zh answers (else code).",
    )
    keywords: str = Field(default="", description="Extra indexed words (aliases), never shown.")
    indexed_title: Text | None = Field(
        default=None,
        description="The title the index weighs, when not the shown one (a catalog entry's "
        "title with the names of one run left out: its words say what the entry is about).",
    )
    pattern: str | None = Field(
        default=None,
        description="Catalog entries: the regex of the error message the entry explains.",
    )

    def code_for(self, lang: Lang) -> str | None:
        return (self.code_zh or self.code) if lang == "zh" else self.code


class GlossaryEntry(Frozen):
    id: str
    lesson: str = Field(description="Lesson id that teaches it.")
    terms: list[str] = Field(default_factory=list, description="API names, e.g. 'x.grad'.")
    aliases: BiText | None = Field(default=None, description="Other ways learners say it.")
    title: BiText
    text: BiText
    code: BiText | None = Field(
        default=None, description="An example; {en, zh} where its comments are words to translate."
    )


class Glossary(Frozen):
    entries: list[GlossaryEntry]
    synonyms: dict[str, str] = Field(
        default_factory=dict, description="Query word -> word the index knows."
    )
    topic_words: list[str] = Field(
        default_factory=list, description="Words that make a question about autograd/PyTorch."
    )
    broad_topic_words: list[str] = Field(
        default_factory=list,
        description="Words that place a question near PyTorch (a GPU, a model) without making "
        "it about autograd: half the weight of topic_words in the on-topic judgement.",
    )
    guiding_questions: dict[str, BiText] = Field(
        default_factory=dict, description="Lesson id (or LESSON/STEP, for a step whose "
        "exercise the lesson's question misses) -> a question that leads without telling."
    )
