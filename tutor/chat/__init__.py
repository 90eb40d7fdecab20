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

import importlib
from typing import Any

# Imported on first use, so that `tutor ask` answering from the answer cards
# (tutor.chat.quick) never imports pydantic or the retrieval index.
_WHERE = {
    "ChatBackend": "tutor.chat.llm",
    "LLMConfig": "tutor.chat.llm",
    "LLMConfigError": "tutor.chat.llm",
    "LLMError": "tutor.chat.llm",
    "OpenAICompatibleBackend": "tutor.chat.llm",
    "load_llm_config": "tutor.chat.llm",
    "Answer": "tutor.chat.models",
    "ChatContext": "tutor.chat.context",
    "Glossary": "tutor.chat.models",
    "GlossaryEntry": "tutor.chat.models",
    "Passage": "tutor.chat.models",
    "Source": "tutor.chat.models",
    "load_glossary": "tutor.chat.passages",
    "Tutor": "tutor.chat.tutor",
    "detect_lang": "tutor.chat.tutor",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tutor.chat' has no attribute {name!r}")


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
