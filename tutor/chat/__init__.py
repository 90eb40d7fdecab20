"""The tutor chat: offline retrieval over the course, catalog and glossary; optional LLM.

CONTRACT (public API, implemented by the chat work)::

    ChatContext(lesson_id, step_id, code, last_run: RunResult | None,
                diagnoses: list[Diagnosis], hints_unlocked: int, attempts: int)
    Tutor(course: Course, *, backend: ChatBackend | None = None)
        .ask(question: str, *, lang: Lang, context: ChatContext | None = None) -> Answer
        .stream(question, *, lang, context) -> Iterator[str]   # LLM streaming; offline: one chunk
    Answer(text: str, sources: list[str], refused: bool, hint_level: int | None, fallback_notice)
"""
