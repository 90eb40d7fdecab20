"""The tutor chat: offline retrieval over the course, catalog and glossary; optional LLM.

Public API::

    ChatContext(lesson_id, step_id, code, last_run: RunResult | None,
                diagnoses: list[Diagnosis], hints_unlocked: int, attempts: int,
                expected_values: list = [], expected_by_expr: dict = {})
    Tutor(course: Course, *, backend: ChatBackend | None = None,
          cache_dir: Path | "default" | None = "default")   # index cached under the user cache dir
    Tutor.from_environment(course)      # uses the LLM configured by env/config file, if any
        .ask(question: str, *, lang: Lang | None, context: ChatContext | None = None) -> Answer
        .stream(question, *, lang, context) -> Iterator[str]   # LLM streaming; offline: one chunk
        .last_answer                    # the Answer behind the last stream()
    Answer(text: str, sources: list[str], refused: bool, hint_level: int | None, fallback_notice,
           kind, lessons, redacted, titled_sources: list[Source])
        .sources_for(lang) -> list[str]  # sources as the learner reads them (titles, not ids)
        .lessons                         # the lessons the text names, best first
"""

from tutor.chat.llm import (
    ChatBackend,
    LLMConfig,
    LLMConfigError,
    LLMError,
    OpenAICompatibleBackend,
    load_llm_config,
)
from tutor.chat.models import Answer, ChatContext, Glossary, GlossaryEntry, Passage, Source
from tutor.chat.passages import load_glossary
from tutor.chat.tutor import Tutor, detect_lang

__all__ = [
    "Answer",
    "ChatBackend",
    "ChatContext",
    "Glossary",
    "GlossaryEntry",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "OpenAICompatibleBackend",
    "Passage",
    "Source",
    "Tutor",
    "detect_lang",
    "load_glossary",
    "load_llm_config",
]
