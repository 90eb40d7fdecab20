"""The tutor: answers a learner's question from the course, their last run and the glossary;
optionally through an LLM, always behind the guardrails."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tutor.chat import messages as msg
from tutor.chat.asked import asks_if_it_errors, other_asks
from tutor.chat.cards import (
    PARTIAL,
    Match,
    about_pytorch,
    bundled_book,
    mentions_output,
    question_kind,
    repeats,
)
from tutor.chat.cpu_standin import CudaOnCpu, needs_gpu
from tutor.chat.domains import (
    ERROR_LINE_RE,
    foreign_words,
    may_be_elsewhere,
    task_domain_names,
)
from tutor.chat.guardrails import (
    Secrets,
    course_secrets,
    course_solution_lines,
    find_leaks,
    redact,
    shown_diagnoses,
    step_secrets,
    without_bare_redactions,
)
from tutor.chat.intents import (
    about_my_run,
    asks_about_error,
    asks_about_program,
    asks_loss_not_falling,
    mentions_error,
    tells_training_symptom,
)
from tutor.chat.markdown import blocks, summary, tidy_chinese
from tutor.chat.models import Answer, Glossary, Passage, Source
from tutor.chat.names import confine, identifiers, step_names
from tutor.chat.quick import (
    MAX_CAUSES,
    card_answers,
    card_text,
    may_be_solution_request,
    names_elsewhere,
    off_topic_text,
    read_line,
    requested_step,
    shown_card,
    symptom_text,
)
from tutor.chat.run_facts import (
    PROBE,
    Fact,
    Pass,
    explains_why,
    facts,
    read_for,
    seen_in,
    text_for,
    watch,
)
from tutor.chat.snippets import (
    DIAGNOSED_KINDS,
    besides_output,
    learner_code,
    pasted_blocks,
    pastes_other_code,
    program_to_diagnose,
    program_to_explain,
    prose,
    snippet_to_run,
)
from tutor.chat.solution_requests import asks_for_solution, points_at_step, step_code_parts
from tutor.chat.step_finder import StepFinder
from tutor.chat.tokens import has_cjk
from tutor.course.models import (
    AnswerStep,
    AttributeCheck,
    CodeStep,
    Course,
    FixStep,
    Lesson,
    ReadingStep,
    Step,
    ValueCheck,
)
from tutor.i18n import Lang, Text
from tutor.markdown_fences import fenced_pieces

if TYPE_CHECKING:  # imported where used: a question from the shell needs none of them
    from tutor.chat.context import ChatContext
    from tutor.chat.index import IndexData
    from tutor.chat.llm import ChatBackend, Message
    from tutor.chat.retrieval import Hit, Retriever
    from tutor.chat.symptoms import Diagnosed, SymptomMatcher
    from tutor.diagnosis.models import Diagnosis
    from tutor.sandbox.models import Evidence, RunResult, TensorSnapshot
    from tutor.sandbox.runner import Runner

CONFIDENT_SCORE = 2.0
"""Below this best score (or on topic by plain words only) the answer says it is unsure."""
AGREEING = 0.8
"""A weak card's lesson must score this share of the best lesson's retrieval score."""
SUMMARY_CHARS = 650
SNIPPET_LIMITS_S = 5.0
"""A pasted snippet runs this long at most: a question's example, not a training run."""
_GRAD_VAR_RE = re.compile(r"\b([A-Za-z_]\w*)\.grad\b")
_PARTIAL_PREFIXES = (PARTIAL.en, PARTIAL.zh)
LOSS_FELL = 0.9
"""A run whose last loss is below this share of its first: the loss goes down."""


def _gpu_missing(result: RunResult, question: str) -> bool:
    """The run stopped only because this machine has no CUDA device, and the question does
    not ask about that error itself."""
    return result.error is not None and needs_gpu(result.error.message) and \
        not needs_gpu(question)


NOT_THE_PROGRAM = frozenset({"NameError", "ImportError", "ModuleNotFoundError",
                             "FileNotFoundError"})
"""A pasted program that stops with one of these is a fragment (a name defined elsewhere, a
module or file of the learner's machine): its run is not the run the learner asks about."""


def _about_own_code(question: str) -> bool:
    """Whether ``question``, pasting no code, asks why the learner's own code misbehaves
    ("why does my code fail?", "what's wrong with it?"), not about a concept in general."""
    if pasted_blocks(question, inline=False):
        return False
    asks = question_kind(question) in DIAGNOSED_KINDS or asks_about_program(question)
    return asks and (about_my_run(question) or asks_about_error(question)
                     or asks_about_program(question))


def detect_lang(question: str) -> Lang:
    return "zh" if has_cjk(question) else "en"


def summarise(
    text: str,
    limit: int = SUMMARY_CHARS,
    query: set[str] | None = None,
    tokens: Callable[[str], list[str]] | None = None,
) -> str:
    """``text`` cut to ``limit``, keeping the blocks that share most terms with ``query``."""
    if not query or tokens is None:
        return summary(text, limit)
    return summary(text, limit, relevance=lambda block: len(query & set(tokens(block))))


class Tutor:
    """Answers questions. Offline unless given a ``backend`` (see :meth:`from_environment`)."""

    def __init__(
        self,
        course: Course,
        *,
        backend: ChatBackend | None = None,
        glossary: Glossary | None = None,
        catalog_entries: Iterable[Any] | None = None,
        cache_dir: Path | Literal["default"] | None = "default",
        runner: Any | None = None,
    ):
        """``glossary``/``catalog_entries`` replace the bundled ones (then nothing is cached);
        ``cache_dir``: where the built index is kept (default: the user cache dir; None: build
        it every time)."""
        self.course = course
        self.backend = backend
        self._index_from = (glossary, catalog_entries, cache_dir)
        """What the retrieval index is built from; it is loaded on first use (a card answer,
        a hint or another domain's question from the shell needs none of it)."""
        self.cards = bundled_book()
        self.runner = runner
        """A sandbox (tutor.sandbox.Runner) to run a pasted snippet a "what does this print?"
        question asks about; without one such a question is answered from the cards."""
        self.steps = StepFinder(course)
        self._card_text: str | None = None
        """The answer card behind the last offline answer, as grounding for an LLM."""
        self._shown_names: dict[int, frozenset[str]] = {}
        """id(step) -> the names that step shows (its course's steps live as long as it)."""
        self._hints_given: dict[str, tuple[int, int]] = {}
        """step ref -> (hint level given, context.attempts when it was given)."""
        self.last_answer: Answer | None = None
        """The Answer behind the most recent :meth:`stream` (for faces that stream)."""
        self.config_notice: Text | None = None
        """(en, zh) of why the configured LLM cannot be used, when it cannot."""

    @cached_property
    def _index(self) -> IndexData:
        from tutor.chat.concepts import load_concepts
        from tutor.chat.index import build_course_index, default_cache_dir, load_index
        from tutor.chat.passages import load_catalog_entries, load_glossary

        glossary, catalog_entries, cache_dir = self._index_from
        if glossary is None and catalog_entries is None:
            cache = default_cache_dir() if cache_dir == "default" else cache_dir
            return load_index(self.course, cache)
        entries = load_catalog_entries() if catalog_entries is None else catalog_entries
        return build_course_index(
            self.course, glossary or load_glossary(), entries, load_concepts()
        )

    @cached_property
    def _solution_lines(self) -> frozenset[str]:
        """Every exercise's reference solution lines the learner is shown nowhere."""
        return course_solution_lines(self.course)

    @cached_property
    def retriever(self) -> Retriever:
        from tutor.chat.retrieval import Retriever

        return Retriever(self._index)

    @property
    def glossary(self) -> Glossary:
        return self._index.glossary

    @cached_property
    def passages(self) -> dict[str, Passage]:
        return {p.id: p for p in self._index.passages}

    @cached_property
    def symptoms(self) -> SymptomMatcher:
        from tutor.chat.symptoms import SymptomMatcher, load_symptoms

        return SymptomMatcher(load_symptoms().resolved(self.passages))

    @classmethod
    def from_environment(cls, course: Course, **kwargs: Any) -> Tutor:
        """A tutor that uses the configured LLM endpoint, or stays offline if none is. A broken
        configuration leaves it offline too: every answer then starts with a one-line notice."""
        from tutor.chat.llm_location import llm_configured

        if not llm_configured():
            return cls(course, **kwargs)
        from tutor.chat.llm import LLMConfigError, OpenAICompatibleBackend, load_llm_config

        try:
            config = load_llm_config()
        except LLMConfigError as exc:
            tutor = cls(course, **kwargs)
            tutor.config_notice = exc.text
            return tutor
        backend = OpenAICompatibleBackend(config) if config else None
        return cls(course, backend=backend, **kwargs)

    def _config_fallback(self, answer: Answer, lang: Lang) -> Answer:
        """``answer`` behind the notice that the LLM's configuration is broken, if it is."""
        if self.config_notice is None or answer.kind in ("off_topic", "empty"):
            return answer
        reason = self.config_notice.get(lang)
        notice = msg.LLM_FAILED.format(reason=reason.splitlines()[0]).get(lang)
        return self._fallback(answer, notice)

    # ------------------------------------------------------------------ public

    def ask(
        self, question: str, *, lang: Lang | None = None, context: ChatContext | None = None
    ) -> Answer:
        lang, offline, messages, secrets = self._prepare(question, lang, context)
        if messages is None or self.backend is None:
            return offline
        from tutor.chat.llm import LLMError

        try:
            reply = self.backend.complete(messages)
        except LLMError as exc:
            answer = self._fallback(offline, msg.LLM_FAILED.format(reason=str(exc)).get(lang))
        else:
            if find_leaks(reply, secrets, question=question).leaked or not reply.strip():
                answer = self._fallback(offline, msg.LLM_LEAKED.get(lang))
            else:
                answer = offline.model_copy(update={"text": reply.strip()})
        self.last_answer = answer
        return answer

    def stream(
        self, question: str, *, lang: Lang | None = None, context: ChatContext | None = None
    ) -> Iterator[str]:
        """Yields the answer in pieces. With an LLM, text is released a paragraph at a time,
        each checked (with all text before it) for leaks before it is yielded."""
        lang, offline, messages, secrets = self._prepare(question, lang, context)
        if messages is None or self.backend is None:
            yield offline.text
            return
        from tutor.chat.llm import LLMError

        released, pending = "", ""
        try:
            for chunk in self.backend.stream(messages):
                pending += chunk
                cut = _release_point(pending)
                if cut == 0:
                    continue
                if find_leaks(released + pending, secrets, question=question).leaked:
                    yield from self._stream_fallback(offline, msg.LLM_LEAKED.get(lang), released)
                    return
                yield pending[:cut]
                released, pending = released + pending[:cut], pending[cut:]
            if find_leaks(released + pending, secrets, question=question).leaked:
                yield from self._stream_fallback(offline, msg.LLM_LEAKED.get(lang), released)
                return
        except LLMError as exc:
            notice = msg.LLM_FAILED.format(reason=str(exc)).get(lang)
            yield from self._stream_fallback(offline, notice, released)
            return
        if pending:
            yield pending
        text = (released + pending).strip()
        if not text:
            self.last_answer = self._fallback(
                offline, msg.LLM_FAILED.format(reason="empty reply").get(lang)
            )
            yield self.last_answer.text
            return
        self.last_answer = offline.model_copy(update={"text": text})

    def _prepare(
        self, question: str, lang: Lang | None, context: ChatContext | None
    ) -> tuple[Lang, Answer, list[Message] | None, Secrets]:
        """(language, offline answer, the LLM's prompt or None, secrets): None when the
        offline answer is the answer (no LLM, or a hint, an off-topic or empty question), which
        is then ``last_answer`` already."""
        lang = lang or detect_lang(question)
        offline, hits, secrets = self._offline(question, lang, context)
        offline = with_documentation(offline, question, lang)
        if self.backend is None or offline.kind in ("off_topic", "hint", "empty"):
            self.last_answer = self._config_fallback(offline, lang)
            return lang, self.last_answer, None, secrets
        from tutor.chat.llm import build_messages

        messages = build_messages(
            question,
            lang=lang,
            passages=[h.passage for h in hits[:4]],
            context=context,
            card=self._card_text,
        )
        return lang, offline, messages, secrets

    # ------------------------------------------------------------------ offline

    def _step(self, context: ChatContext | None) -> tuple[Lesson | None, Step | None]:
        if context is None or not context.lesson_id:
            return None, None
        return self._lesson_and_step(context.lesson_id, context.step_id)

    def _lesson_and_step(
        self, lesson_id: str, step_id: str | None
    ) -> tuple[Lesson | None, Step | None]:
        found = self._lesson_step(lesson_id, step_id or "")
        return found if found is not None else (None, None)

    def _secrets(
        self, lesson: Lesson | None, step: Step | None, context: ChatContext | None
    ) -> Secrets:
        # lesson readings are not counted as "already seen": even when a reading shows a line
        # of the step's solution, the tutor does not paste it for that step
        if context is None:
            return step_secrets(step)
        return step_secrets(
            step,
            expected_values=context.expected_values,
            expected_by_expr=context.expected_by_expr,
        )

    def _offline(
        self, question: str, lang: Lang, context: ChatContext | None
    ) -> tuple[Answer, list[Hit], Secrets]:
        answer, hits, secrets = self._offline_answer(question, lang, context)
        if answer.kind == "hint" or may_be_solution_request(question, self.steps):
            # a request for a solution (answered with a hint, or by whatever else answered
            # it): it shows no line of any exercise's reference solution that the question
            # did not already hold
            guard = course_secrets(self._solution_lines, question)
            answer = self._guard(answer, guard, question, lang)
        confined = confine(answer.text, self._sources_of_names(answer, question, context), lang)
        if confined != answer.text:
            text = tidy_chinese(confined) if lang == "zh" else confined
            answer = answer.model_copy(update={"text": text})
        return answer, hits, secrets

    def _sources_of_names(
        self, answer: Answer, question: str, context: ChatContext | None
    ) -> frozenset[str]:
        """The names ``answer`` may show besides PyTorch's and Python's: the learner's (the
        question, the editor's code, its last run and that run's diagnosis) and the lesson's
        (the open step, and the steps whose text or hint the answer quotes)."""
        names = identifiers(question)
        steps: list[Step] = []
        if context is not None:
            names |= identifiers(context.code)
            run = context.last_run
            if run is not None:
                names |= identifiers(f"{run.stdout}\n{run.stderr}")
                if run.error is not None:
                    names |= identifiers(f"{run.error.type}: {run.error.message}")
            for diagnosis in context.diagnoses:  # the diagnosis of that run, in its names
                names |= identifiers(f"{diagnosis.explanation.en}\n{diagnosis.fix.en}")
            steps += [step for _, step in [self._step(context)] if step is not None]
        for source in answer.sources:
            passage = self.passages.get(source)
            if answer.kind == "hint" and "/" in source and ":" not in source:
                steps += [s for _, s in [self._lesson_and_step(*source.split("/", 1))] if s]
            elif passage is not None and passage.source == "lesson" and \
                    _quotes(answer.text, passage):
                names |= identifiers(f"{passage.text.en}\n{passage.text.zh}\n{passage.code or ''}")
        for step in steps:
            names |= self._step_names(step)
        return names

    def _step_names(self, step: Step) -> frozenset[str]:
        """:func:`names.step_names`, once per step (the TUI asks on the same step)."""
        key = id(step)
        if key not in self._shown_names:
            self._shown_names[key] = step_names(step)
        return self._shown_names[key]

    def _offline_answer(
        self, question: str, lang: Lang, context: ChatContext | None
    ) -> tuple[Answer, list[Hit], Secrets]:
        lesson, step = self._step(context)
        secrets = self._secrets(lesson, step, context)
        if not question.strip():
            return Answer(text=msg.EMPTY.get(lang), kind="empty"), [], secrets
        off_topic = Answer(
            text=off_topic_text(lang, question), refused=True, kind="off_topic"
        )
        # about another domain (buying a GPU, a flask app, a weekly report) or a plain Python
        # error (a scraper's KeyError): neither a request for this step's answer nor a
        # question about the learner's run
        if names_elsewhere(question) or (
            pastes_other_code(question) and not self.cards.signalled(question)
        ):
            return off_topic, [], secrets
        # homework of this course (it pastes or names one of its exercises) is not another
        # subject's homework, whatever words it asks in ("upload the homework solutions");
        # another framework's question stays declined, whatever exercise its words recall
        ours = requested_step(question, self.steps) if step is None else None
        if ours is not None and not set(foreign_words(question).values()) <= task_domain_names():
            ours = None
        if may_be_elsewhere(question) and ours is None:
            judged = self.retriever.judge(question, on_step=step is not None)
            if judged.reason in ("foreign", "plain-error"):
                return off_topic, [], secrets

        def on_topic() -> bool:
            return self.retriever.judge(question, on_step=step is not None).on_topic

        self._card_text = None
        if step is None:
            # from the shell, a request for an exercise's answer pastes its code or title: its
            # next hint answers it, not a run of the pasted starter (whose output or tried fix
            # is no hint, and may be the answer)
            found_step = ours
            if found_step is not None:
                from tutor.chat.context import ChatContext

                ctx = (context or ChatContext()).model_copy(
                    update={"lesson_id": found_step.lesson_id, "step_id": found_step.step_id}
                )
                lesson, step = self._step(ctx)
                secrets = self._secrets(lesson, step, ctx)
                return self._hint(question, lang, ctx, lesson, step, secrets), [], secrets
        ran = self._run_snippet(question, lang, step, secrets)
        if ran is None:
            ran = self._explain_program(question, lang, secrets)
        if ran is None:
            ran = self._diagnose_program(question, lang, step, secrets, context)
        if ran is not None:
            return ran, [], secrets
        # a question about the learner's own run is answered from that run (and its
        # diagnosis) below; an answer card answers the question asked in general
        asks_error = asks_about_error(question) and not self.retriever.quotes_message(question)
        if self._about_run(question, lang, context, about_error=asks_error) is not None:
            pass
        elif (step is None and not may_be_solution_request(question, self.steps)) or (
            step is not None
            and not asks_for_solution(
                question,
                on_step=True,
                step_exprs=_checked_exprs(step, context),
                step_parts=_code_parts(step),
                about_course=lambda: True,
            )
        ):
            carded = self._from_card(question, lang, context)
            if carded is not None:
                # from the shell no step is open: the step the card sends the learner to is
                # the one whose solution it must not show
                guard = secrets if step is not None else self._card_secrets(carded)
                return self._finish(carded, guard, question, lang), [], secrets
        if asks_for_solution(
            question,
            on_step=step is not None,
            step_exprs=_checked_exprs(step, context),
            step_parts=_code_parts(step),
            about_course=on_topic,
        ):
            return self._hint(question, lang, context, lesson, step, secrets), [], secrets
        symptom_only = self._symptom_answer(question, lang, context)
        if symptom_only is not None:
            return self._finish(symptom_only, secrets, question, lang), [], secrets
        # the learner is looking at the current step: its own prompt is no answer
        own = frozenset({f"{context.lesson_id}/{context.step_id}"}) if step and context else None
        found = self.retriever.retrieve(question, exclude=own or frozenset())
        hits = [h for h in found.hits if self.retriever.speaks_of(h.passage, question)]
        lessons = found.lessons[:3] if hits else []
        top = found.top_score
        topic = self.retriever.judge(question, found, on_step=step is not None)
        # "why does it error?" with no message quoted: about the last run, else the step
        about_error = asks_about_error(question) and not self.retriever.quotes_message(question)
        run_part = self._about_run(question, lang, context, about_error=about_error)
        if run_part is None and about_error and step is not None and lesson is not None:
            answer = self._step_error(lesson, step, lang)
            return self._finish(answer, secrets, question, lang), [], secrets
        # "x.grad is None", "the grad keeps growing": answered by the symptom's likely causes,
        # whose lessons come before what the words alone would pick
        symptom = self.symptoms.match(self.retriever.without_quoted_messages(question))
        if run_part is not None and run_part[4]:
            # the facts of the learner's own run say why: not the symptom's general causes,
            # nor a lesson's summary; only the step that teaches it
            symptom, hits = None, []
        if symptom is not None:
            lessons = [*symptom.lessons, *(lid for lid in lessons if lid not in symptom.lessons)]
            lessons = lessons[:3]
        # "how do I do this step?" on a step is about the course, whatever its words
        about_step = step is not None and points_at_step(question)
        if run_part is None and symptom is None and about_error and topic.reason != "anchor":
            # it asks about an error and names nothing else: ask for the message
            return self._finish(self._need_error(lang), secrets, question, lang), [], secrets
        if (
            run_part is None
            and symptom is None
            and (not hits or not (topic.on_topic or about_step))
        ):
            return off_topic, [], secrets
        parts: list[str] = []
        sources: list[str] = []
        titled: list[Source] = []
        named: list[str] = []
        """Lessons the text names, in order (Answer.lessons)."""
        if run_part is not None:
            parts.append(run_part[0])
            sources.extend(run_part[1])
            titled.extend(run_part[3])
        elif symptom is None and (top < CONFIDENT_SCORE or topic.reason != "anchor"):
            parts.append(msg.LOW_CONFIDENCE.get(lang))
        if symptom is not None:
            parts.extend(self._compose_symptom(symptom, lang, sources, named, titled))
        elif hits:
            prefer = run_part[2] if run_part else None
            parts.extend(
                self._compose(
                    hits,
                    lang,
                    sources,
                    prefer=prefer,
                    query=set(found.query),
                    lessons=lessons,
                    named=named,
                )
            )
        elif run_part is not None and run_part[2]:
            read = self._read_line(run_part[2], lang, named)
            if read:
                parts.append(read)
        text = "\n\n".join(parts)
        answer = Answer(
            text=text,
            sources=sources,
            titled_sources=titled
            + [t for s in sources if s not in {x.id for x in titled} and (t := self._titled(s))],
            kind="context" if run_part else "answer",
            # the lessons the text names (best first), so a face that lists them agrees
            lessons=named,
        )
        return self._finish(answer, secrets, question, lang), hits, secrets

    def _symptom_answer(
        self, question: str, lang: Lang, context: ChatContext | None
    ) -> Answer | None:
        """ "x.grad is None", "the grad keeps growing", said in plain words with no run to
        look at and no error quoted: the symptom's likely causes, without the retrieval over
        the course (they name their own lessons)."""
        if context is not None and (context.last_run is not None or context.diagnoses):
            return None
        if ERROR_LINE_RE.search(question) or asks_about_error(question):
            return None
        symptom = self.symptoms.match(question)
        if symptom is None:
            return None
        sources: list[str] = []
        titled: list[Source] = []
        named: list[str] = []
        text = "\n\n".join(self._compose_symptom(symptom, lang, sources, named, titled))
        titled += [t for x in sources if x not in {s.id for s in titled} and (t := self._titled(x))]
        return Answer(text=text, sources=sources, titled_sources=titled, lessons=named)

    def _run_snippet(
        self, question: str, lang: Lang, step: Step | None, secrets: Secrets
    ) -> Answer | None:
        """ "What does this print?" (or "it prints 202, why?") with code pasted: run it in
        the sandbox and answer from what it really printed — or, when it raises, from its
        error and the diagnosis of that run — unless that gives away the open step's or the
        pasted exercise's expected values."""
        runner = self.runner
        if runner is None:
            return None
        code = snippet_to_run(question)
        if code is None:
            return None
        from tutor.errors import TutorError
        from tutor.sandbox.models import Limits

        try:
            result = runner.run(
                code, device="cpu", limits=Limits(wall_time_s=SNIPPET_LIMITS_S)
            )
            on_gpu = False
            if _gpu_missing(result, question):  # written for a GPU this sandbox lacks
                stand_in = CudaOnCpu(runner)
                again = stand_in.run(
                    code, device="cpu", limits=Limits(wall_time_s=SNIPPET_LIMITS_S)
                )
                if not _gpu_missing(again, question):  # the run with the CPU for it
                    runner, result, on_gpu = stand_in, again, True
        except (TutorError, OSError):  # no sandbox here (e.g. torch missing): explain instead
            return None
        if result.error is not None and question_kind(question) != "value":
            # "it prints 202, why?": a run that raises here (no GPU, an import left out of
            # the paste) is not the run the learner describes, so it is no evidence about
            # it; unless it printed first, and what ran before the error says why a
            # ``.grad`` it read is what it is (that part of the run is the learner's)
            return self._facts_before_error(question, lang, runner, code, result, on_gpu,
                                            secrets)
        parts: list[str] = []
        sources: list[str] = []
        extra = ""
        if on_gpu:
            parts.append(msg.RAN_ON_CPU.get(lang))
        if result.error is not None:
            parts.append(
                msg.RAN_SNIPPET_ERROR.format(
                    line=str(result.error.line or "?"),
                    error=f"{result.error.type}: {result.error.message.splitlines()[0][:200]}",
                ).get(lang)
            )
            extra = f"{result.error.type}: {result.error.message}"
        elif result.stdout.strip():
            parts.append(
                f"{msg.RAN_SNIPPET.get(lang)}\n\n```\n{result.stdout.rstrip()[:1500]}\n```"
            )
        else:
            parts.append(msg.RAN_SNIPPET_NOTHING.get(lang))
        if result.stdout.strip() and result.error is not None:
            parts.append(
                f"{msg.RAN_SNIPPET_BEFORE.get(lang)}\n\n```\n{result.stdout.rstrip()[:800]}\n```"
            )
        guards: list[tuple[Step | None, Secrets]] = [(step, secrets)] if step else []
        pasted = self.steps.find(question)
        if pasted is not None:
            lesson, found = self._lesson_and_step(pasted.lesson_id, pasted.step_id)
            guards.append((found, self._secrets(lesson, found, None)))
        shown = "\n\n".join(parts)
        for guarded, guard in guards:
            if guarded is not None and find_leaks(shown, guard, question=question).leaked:
                parts = [msg.SNIPPET_WITHHELD.format(step=guarded.title.get(lang)).get(lang)]
                break
        ref = None
        if result.error is not None:
            diagnosed = self._diagnose_snippet(runner, code, result, step, lang)
            if diagnosed is not None:
                parts.append(diagnosed[0])
                sources.append(diagnosed[1])
                ref = diagnosed[2]
        found_facts = self._snippet_facts(runner, code) if result.error is None else []
        # the learner's words say what puzzles them; the code's own names (torch.tensor,
        # requires_grad) are in every snippet and would pick a card about them
        said = prose(question)
        others = besides_output(question)
        found_card = None if explains_why(found_facts) else self.cards.match(
            others or said, extra=extra
        )
        brief = False
        asks, around = other_asks(question)
        if found_card is not None and found_card.card.error and result.error is None and \
                not any(signal in question.lower() for signal in found_card.card.signals):
            # a card about an error ("backward() needs a scalar: l has several elements") would
            # contradict the run, which raised none; unless the learner quotes that error
            # (met in another version of the code they ask about)
            found_card = None
        if asks and asks_if_it_errors(asks):
            # "does it really raise?": its own run says yes or no, first
            if result.error is None:
                parts.insert(0, msg.RAN_NO_ERROR.get(lang))
                # a card about the error would contradict the run
                found_card, asks = None, ""
            else:  # the next paragraph says where and what
                parts.insert(0, msg.RAN_RAISES.get(lang))
        if found_card is None and explains_why(found_facts) and asks:
            # the run says why it prints that; what else the question asks ("is that
            # right?", "why don't intermediate tensors keep a gradient?") gets its card's
            # leading point after the run's facts
            other = self.cards.match(around, extra=extra)
            # a yes or no about this code's result ("is the result right?") is the run's to
            # give, not a card's about something else
            if other is not None and other.sure and card_answers(other, around) and \
                    question_kind(asks) not in ("can", "safe"):
                found_card, brief = other, True
        if found_facts and (found_card is None or explains_why(found_facts)):
            # why it prints that, from its own run: the facts answer, not a topic's summary
            parts.append(text_for(found_facts, lang))
            ref = read_for(found_facts)
        if found_card is not None:
            explained = card_text(
                self.course, found_card, lang, (question, "", extra), brief=brief
            )
            # the card's explanation, without the example: the learner's own code is the example
            parts.append(re.sub(r"```python.*?```\n*", "", explained, flags=re.DOTALL).strip())
            ref = found_card.read
        else:  # no card explains it: the lesson the retrieval finds for it is the one to read
            if ref is None:
                hits = self.retriever.retrieve(question).hits
                ref = _ref(hits[0].passage, hits) if hits else None
            read = self._read_line(ref, lang) if ref else None
            if read:
                parts.append(read)
        text = "\n\n".join(parts)
        if lang == "zh":
            text = tidy_chinese(text)
        titled = self._titled(ref) if ref else None
        answer = Answer(
            text=text,
            sources=[*sources, *([ref] if ref else [])],
            titled_sources=[titled] if titled else [],
            kind="answer",
            lessons=[ref.partition("/")[0]] if ref else [],
        )
        # the snippet may be an exercise's own code: its answer's lines stay hidden too
        for _, guard in guards:
            answer = self._guard(answer, guard, question, lang)
        return answer

    def _facts_before_error(
        self, question: str, lang: Lang, runner: Runner, code: str, result: RunResult,
        on_gpu: bool, secrets: Secrets,
    ) -> Answer | None:
        """The facts of the ``.grad`` reads a snippet made before it raised, where it printed
        first: they explain what the learner saw printed; the error that came after is said
        in one line after them (it is this machine's run, maybe not the learner's)."""
        if result.error is None or not result.stdout.strip() or result.error.type in question \
                or asks_about_error(question) or mentions_error(prose(question)):
            return None  # it asks about the error: the program's diagnosis answers that
        # the records of the reads made before the error are still that run's facts
        found = self._snippet_facts(runner, code, before_error=True)
        if not explains_why(found):
            return None
        parts = [msg.RAN_ON_CPU.get(lang)] if on_gpu else []
        said = result.error.message.splitlines()[0][:200].rstrip(".")
        parts += [text_for(found, lang), msg.RAN_LATER_ERROR.format(
            line=str(result.error.line or "?"), error=f"{result.error.type}: {said}",
        ).get(lang)]
        answer = self._read_answer(parts, read_for(found), lang)
        return self._guard_pasted(self._finish(answer, secrets, question, lang), question, lang)

    def _read_answer(self, parts: list[str], ref: str | None, lang: Lang, *,
                     read: bool = True) -> Answer:
        """``parts`` as an answer that sends the learner to the step ``ref`` (its "Read:"
        line last, unless ``read`` is False: a card's text names its step itself)."""
        line = self._read_line(ref, lang) if ref and read else None
        titled = self._titled(ref) if ref else None
        return Answer(
            text="\n\n".join([*parts, *([line] if line else [])]),
            sources=[ref] if ref else [],
            titled_sources=[titled] if titled else [],
            kind="answer",
            lessons=[ref.partition("/")[0]] if ref else [],
        )

    def _explain_program(self, question: str, lang: Lang, secrets: Secrets) -> Answer | None:
        """ "Why is ``a.grad`` None here?" with a program pasted: the cause in this code, from
        the facts of its own run (run_facts.py), first; then the card's explanation without
        its example (the learner's code is the example). None when the run shows no cause
        (the card or the retrieval answers as for any question)."""
        runner = self.runner
        code = program_to_explain(question) if runner is not None else None
        if runner is None or code is None:
            return None
        found_facts = self._snippet_facts(runner, code)
        if not explains_why(found_facts):
            return None
        parts = [text_for(found_facts, lang)]
        found_card = self.cards.match(besides_output(question) or prose(question))
        if found_card is not None and card_answers(found_card, question) and found_card.sure:
            explained = card_text(self.course, found_card, lang, (question, "", ""))
            explained = re.sub(r"```python.*?```\n*", "", explained, flags=re.DOTALL).strip()
            answer = self._read_answer([*parts, explained], found_card.read, lang, read=False)
        else:
            answer = self._read_answer(parts, read_for(found_facts), lang)
        pasted = self.steps.find(question)
        answer = self._finish(answer, secrets, question, lang)
        if pasted is not None:
            lesson, found = self._lesson_and_step(pasted.lesson_id, pasted.step_id)
            answer = self._guard(answer, self._secrets(lesson, found, None), question, lang)
        return answer

    def _requests_solution(
        self, question: str, step: Step | None, context: ChatContext | None
    ) -> bool:
        """Whether ``question`` asks for an exercise's solution (pasting its code and error
        too): a hint answers it, not the diagnosis of the pasted code."""
        return may_be_solution_request(question, self.steps) or asks_for_solution(
            question,
            on_step=step is not None,
            step_exprs=_checked_exprs(step, context),
            step_parts=_code_parts(step),
            about_course=lambda: True,
        )

    def _diagnose_program(
        self,
        question: str,
        lang: Lang,
        step: Step | None,
        secrets: Secrets,
        context: ChatContext | None,
    ) -> Answer | None:
        """ "Why is my loss not decreasing?", "why do I get this error?", "what is wrong
        here?" with a program pasted (or, in the TUI, about the editor's code): its own run
        and the diagnosis of that run answer it — the cause on the learner's line in their
        names, then the card's why for that concept, then the fix tried on their program.
        None when there is no program to run, when its run is not the program described (a
        fragment stops at a name it never defines), or when the diagnosis pins no cause and
        the run has nothing true to add (the card answers as for any question)."""
        if self.runner is None and (context is None or not context.diagnoses):
            return None  # nothing to run it in, and no diagnosis of a run to read
        code = program_to_diagnose(question)
        own = code is None and context is not None and _about_own_code(question)
        if (code is None and not own) or self._requests_solution(question, step, context):
            return None  # no program, or a request for an exercise's solution: a hint's
        if own and context is not None:
            run = context.last_run
            if context.diagnoses and run is not None:
                # the app diagnosed the last run already (it raised, or its answer was wrong)
                pinned = [d for d in shown_diagnoses(context.diagnoses, step)
                          if not d.generic and (d.root_line or d.line)]
                if not pinned:
                    return None
                return self._from_diagnosis(question, lang, context.code, run, pinned[0],
                                            secrets)
            if context.code.strip():
                code = context.code  # the learner's own code in the editor, never a reference
        runner = self.runner
        if code is None or runner is None:
            return None
        from tutor.errors import TutorError
        from tutor.sandbox.models import Limits

        try:
            result = runner.run(code, device="cpu", limits=Limits(wall_time_s=SNIPPET_LIMITS_S))
        except (TutorError, OSError):
            return None
        on_gpu = False
        if _gpu_missing(result, question):
            # written for the asker's GPU, and this sandbox has none: that error is the
            # machine's; the program's own run is the one with the CPU in the GPU's place
            stand_in = CudaOnCpu(runner)
            try:
                again = stand_in.run(code, device="cpu",
                                     limits=Limits(wall_time_s=SNIPPET_LIMITS_S))
            except (TutorError, OSError):
                return None
            if not _gpu_missing(again, question):
                runner, result, on_gpu = stand_in, again, True
        if result.outcome not in ("ok", "error") or (
            result.error is not None and result.error.type in NOT_THE_PROGRAM
        ):
            return None  # stopped by a limit, or a fragment: not the run the learner describes
        quoted = ERROR_LINE_RE.search(question) is not None or self.retriever.quotes_message(
            question
        )
        if result.error is not None and quoted and result.error.type not in question:
            return None  # another error than the one asked about
        said = prose(question)
        if result.error is not None and not quoted and not mentions_error(said) and (
            mentions_output(said) or asks_loss_not_falling(said)
        ):
            return None  # it ran for the learner (it printed, its loss moved): not this run
        from tutor.diagnosis.reasoning import diagnose_with_evidence

        try:
            diagnoses, evidence = diagnose_with_evidence(code, result, runner, try_fixes=True)
        except (TutorError, OSError):
            return None
        pinned = [d for d in shown_diagnoses(diagnoses, step)
                  if not d.generic and (d.root_line or d.line)]
        if not pinned:
            answer = self._no_such_problem(question, lang, result, evidence, secrets, context,
                                           quoted=quoted)
        else:
            answer = self._from_diagnosis(question, lang, code, result, pinned[0], secrets)
        if answer is None or not on_gpu:
            return answer
        return answer.model_copy(update={"text": f"{msg.RAN_ON_CPU.get(lang)}\n\n{answer.text}"})

    def _no_such_problem(
        self,
        question: str,
        lang: Lang,
        result: RunResult,
        evidence: Evidence | None,
        secrets: Secrets,
        context: ChatContext | None,
        *,
        quoted: bool,
    ) -> Answer | None:
        """The learner's program ran and its diagnosis pinned nothing: when its run shows the
        very problem asked about is not there (no error where the question asks about one, a
        loss that fell where it says the loss does not), say so first, then the card's answer
        (or, for an error, what to paste); when it ran and shows nothing of the kind, what
        the run shows, then the card's answer; else None (answered as any question is)."""
        from tutor.diagnosis.run_summary import run_summary

        if result.error is None and (quoted or mentions_error(prose(question))):
            said = msg.RAN_WITHOUT_ERROR.get(lang)
            fallback: Answer | None = self._need_error(lang)
        elif result.error is None and asks_loss_not_falling(question) and _loss_fell(
                losses := _losses(evidence)):
            said = msg.RAN_LOSS_FELL.format(first=f"{losses[0]:.4g}", last=f"{losses[-1]:.4g}",
                                            count=str(len(losses))).get(lang)
            fallback = None
        elif result.error is None and evidence is not None and (
                tells_training_symptom(prose(question)) or self.symptoms.match(
                    self.retriever.without_quoted_messages(question)) is not None) and (
                shown := run_summary(evidence)):
            # it describes a symptom of its training (its loss, its gradients, its weights)
            # and no check pins a mistake: the facts of its own run, then the card
            said = "\n".join([msg.RAN_SHOWS.get(lang),
                              *(f"- {line.get(lang)}" for line in shown)])
            # the run's facts answer alone where no card does: better than the nearest topic
            fallback = Answer(text="", kind="context")
        else:
            return None
        carded = self._from_card(question, lang, context)
        if carded is not None and not carded.text.startswith(_PARTIAL_PREFIXES):
            fallback = carded
        if fallback is None:
            return None
        answer = fallback.model_copy(
            update={"text": f"{said}\n\n{fallback.text}" if fallback.text else said})
        return self._guard_pasted(self._finish(answer, secrets, question, lang), question, lang)

    def _from_diagnosis(
        self,
        question: str,
        lang: Lang,
        code: str,
        result: RunResult,
        diagnosis: Diagnosis,
        secrets: Secrets,
    ) -> Answer:
        """The answer from one diagnosis of the learner's program: the cause on their line
        first, its explanation, the card's why for that concept, and the fix (said as tried
        on their program when its trial worked)."""
        line = diagnosis.root_line or diagnosis.line or 0
        lines = code.splitlines()
        shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        title = diagnosis.title.get(lang).rstrip("。.")
        if result.error is not None:
            message = result.error.message.splitlines()[0][:160].rstrip(".")
            error = f"{result.error.type}: {message}"
            head = msg.RAN_CAUSE_ERROR.format(
                error_line=str(result.error.line or line), line=str(line), code=shown,
                error=error, title=title)
        else:
            head = msg.RAN_CAUSE.format(line=str(line), code=shown, title=title)
        parts = [head.get(lang), diagnosis.explanation.get(lang)]
        ref = diagnosis.lesson_ref
        concept = self._concept_card(question, diagnosis, code, result)
        if concept is not None:
            why_match = dataclasses.replace(concept, kind="why", more=(), verdict=None)
            error = f"{result.error.type}: {result.error.message}" if result.error else ""
            # its leading facet alone: the step to read is said last, after the fix
            why = card_text(self.course, why_match, lang, (question, code, error), brief=True,
                            read=False)
            why = re.sub(r"```python.*?```\n*", "", why, flags=re.DOTALL).strip()
            if why and not repeats(why, parts):
                parts.append(why)
            ref = concept.read
        if diagnosis.fix_verified and diagnosis.fix_check is not None:
            parts.append(msg.RAN_FIX_TRIED.format(
                fix=diagnosis.fix.get(lang).rstrip("。."),
                check=diagnosis.fix_check.get(lang).rstrip("。."),
            ).get(lang))
        else:
            parts.append(msg.FIX.format(fix=diagnosis.fix.get(lang)).get(lang))
        read = self._read_line(ref, lang) if ref else None
        if read:
            parts.append(read)
        titled = self._titled(ref) if ref else None
        answer = Answer(
            text="\n\n".join(parts),
            sources=[f"diagnosis:{diagnosis.id}", *([ref] if ref else [])],
            titled_sources=[titled] if titled else [],
            kind="answer",
            lessons=[ref.partition("/")[0]] if ref else [],
        )
        return self._guard_pasted(self._finish(answer, secrets, question, lang), question, lang)

    def _concept_card(
        self, question: str, diagnosis: Diagnosis, code: str, result: RunResult
    ) -> Match | None:
        """The card that explains the concept behind ``diagnosis``: the question's own card
        when it teaches in the diagnosis's lesson, else the card the diagnosis's words find
        there; None when no card teaches in that lesson."""
        lesson = (diagnosis.lesson_ref or "").partition("/")[0]
        extra = f"{result.error.type}: {result.error.message}" if result.error else ""
        said = besides_output(question) or prose(question)
        for asked, also in ((said, extra), (diagnosis.title.en, "")):
            found = self.cards.match(asked, extra=also)
            if found is not None and (not lesson or lesson in found.lessons):
                return found
        return None

    def _guard_pasted(self, answer: Answer, question: str, lang: Lang) -> Answer:
        """``answer`` without what it shares with the solution of an exercise the question
        pastes (a learner may paste an exercise's own code)."""
        pasted = self.steps.find(question)
        if pasted is None:
            return answer
        lesson, found = self._lesson_and_step(pasted.lesson_id, pasted.step_id)
        return self._guard(answer, self._secrets(lesson, found, None), question, lang)

    @staticmethod
    def _snippet_facts(runner: Runner, code: str, *, before_error: bool = False
                       ) -> list[Fact]:
        """What the snippet's own run shows about each ``.grad`` it reads (a second run of it,
        with records on its own lines); empty when it reads none or that run fails, unless
        ``before_error``: then the reads made before the error count."""
        from tutor.errors import TutorError
        from tutor.sandbox.models import Limits

        watched = watch(code)
        if watched is None:
            return []
        try:
            result = runner.run(
                watched.code,
                device="cpu",
                probes=[PROBE],
                limits=Limits(wall_time_s=SNIPPET_LIMITS_S),
                instrument=True,
            )
        except (TutorError, OSError):
            return []
        probe = result.probe(PROBE) if result.error is None or before_error else None
        value = getattr(probe.value, "value", None) if probe is not None else None
        evidence = result.evidence
        passes = [
            Pass(reached=tuple(b.reached), accumulated=b.accumulated or 0)
            for b in (evidence.backwards if evidence is not None else [])
        ]
        return facts(watched, seen_in(value), passes)

    @staticmethod
    def _diagnose_snippet(
        runner: Runner, code: str, result: RunResult, step: Step | None, lang: Lang
    ) -> tuple[str, str, str | None] | None:
        """(text, source id, lesson ref) of the diagnosis of a pasted snippet's error, as the
        Diagnosis tab words it (its fix withheld where it is the open step's answer)."""
        from tutor.diagnosis.reasoning import diagnose
        from tutor.errors import TutorError

        try:
            diagnoses = diagnose(code, result, runner, try_fixes=False)
        except (TutorError, OSError):  # the run's output still answers without its diagnosis
            return None
        shown = shown_diagnoses(diagnoses[:1], step)
        if not shown:
            return None
        diagnosis = shown[0]
        text = f"**{diagnosis.title.get(lang)}** — {diagnosis.explanation.get(lang)}\n\n"
        text += msg.FIX.format(fix=diagnosis.fix.get(lang)).get(lang)
        return text, f"diagnosis:{diagnosis.id}", diagnosis.lesson_ref

    def _card_secrets(self, answer: Answer) -> Secrets:
        _, step = self._lesson_and_step(answer.lessons[0], answer.sources[0].partition("/")[2])
        return step_secrets(step)

    def _from_card(self, question: str, lang: Lang, context: ChatContext | None) -> Answer | None:
        """The answer card's answer, shaped by the kind of question, in the learner's names;
        None when no card answers it well. A question about an error that quotes none is
        matched with the learner's last error."""
        code = context.code if context is not None else ""
        error = ""
        run = context.last_run if context is not None else None
        if run is not None and run.error is not None:
            error = f"{run.error.type}: {run.error.message}"
        extra = error if error and not self.retriever.quotes_message(question) else ""
        found = self.cards.match(question, extra=extra, code=learner_code(question, code))
        # a symptom named in general ("my x.grad is None", "the grads keep growing") is
        # answered by its likely causes; a card answers it when it quotes a message or API
        if found is None or not card_answers(found, question):
            return None
        if not found.sure and (about_pytorch(question)
                               or not self.cards.asks_form_of(question, found.card.id)):
            # a weak match answers only where the retrieval over the course agrees: one of
            # its lessons scores nearly as well as the best lesson for the question's words
            # (a symptom in plain words, no PyTorch word, that nearly asks one of the card's
            # forms needs no agreement: the lessons' prose has none of its words)
            scores = self.retriever.retrieve(question).lesson_scores
            best = max(scores.values(), default=0.0)
            if not any(scores.get(lesson, 0.0) >= AGREEING * best > 0 for lesson in found.lessons):
                return None
        found, text = shown_card(self.course, found, lang, (question, code, error))
        ref = found.read
        lesson_id = ref.partition("/")[0]
        lessons = [lesson_id]
        if found.card.also and found.card.also.partition("/")[0] not in lessons:
            lessons.append(found.card.also.partition("/")[0])
        self._card_text = text
        titled = self._titled(ref)
        return Answer(
            text=text,
            sources=[ref],
            titled_sources=[titled] if titled else [],
            kind="answer",
            lessons=lessons,
        )

    def _finish(self, answer: Answer, secrets: Secrets, question: str, lang: Lang) -> Answer:
        """The answer as shown: Chinese without stray spaces, checked for leaks."""
        if lang == "zh":
            answer = answer.model_copy(update={"text": tidy_chinese(answer.text)})
        return self._guard(answer, secrets, question, lang)

    def _step_error(self, lesson: Lesson, step: Step, lang: Lang) -> Answer:
        """Why the step's code errors, without a run: the catalog entries the step's prompt
        quotes (a fix step names its error) or that name the step as where they are taught."""
        entries = self._step_errors(lesson, step)
        title = step.title.get(lang)
        if not entries:
            return Answer(
                text=msg.STEP_ERROR_UNKNOWN.get(lang),
                kind="context",
                lessons=[lesson.id],
                sources=[f"{lesson.id}/{step.id}"],
                titled_sources=[t for t in [self._titled(f"{lesson.id}/{step.id}")] if t],
            )
        head = msg.STEP_ERROR_FIX if isinstance(step, FixStep) else msg.STEP_ERROR_LIKELY
        parts = [head.format(step=title).get(lang)]
        for entry in entries:
            # why, not the fix (a fix step's fix is its answer); no title: a catalog title
            # names a stand-in variable (`x`), not the step's
            parts.append(next(iter(blocks(entry.text.get(lang))), ""))
        named: list[str] = []
        read = self._read_line(self._reading_of(lesson), lang, named)
        if read:
            parts.append(read)
        parts.append(msg.STEP_ERROR_NEXT.get(lang))
        sources = [e.id for e in entries]
        return Answer(
            text="\n\n".join(parts),
            sources=sources,
            titled_sources=[t for t in map(self._titled, sources) if t is not None],
            kind="context",
            lessons=named or [lesson.id],
        )

    def _step_errors(self, lesson: Lesson, step: Step) -> list[Passage]:
        prompt = getattr(step, "prompt", None)
        quoted = (
            [self.retriever.passages[i] for i in self.retriever.quoted_by(prompt.en)]
            if isinstance(prompt, Text)
            else []
        )
        if quoted and isinstance(step, FixStep):
            return quoted[:2]
        taught = [
            p
            for p in self.passages.values()
            if p.source == "catalog" and p.lesson_id == lesson.id and p.step_id == step.id
        ]
        out = [*quoted, *(p for p in taught if p not in quoted)]
        return out[:2]

    @staticmethod
    def _reading_of(lesson: Lesson) -> str:
        reading = next((s for s in lesson.steps if isinstance(s, ReadingStep)), lesson.steps[0])
        return f"{lesson.id}/{reading.id}"

    def _need_error(self, lang: Lang) -> Answer:
        """A question about an error that names none, with no run or step to read it from."""
        named: list[str] = []
        parts = [msg.NEED_ERROR.get(lang)]
        lesson = next((lsn for lsn in self.course.lessons if lsn.id == "errors"), None)
        if lesson is not None:
            read = self._read_line(self._reading_of(lesson), lang, named)
            if read:
                parts.append(read)
        return Answer(text="\n\n".join(parts), kind="answer", lessons=named)

    def _titled(self, source_id: str) -> Source | None:
        """The learner-readable title of a source id (None for one this tutor cannot name)."""
        passage = self.passages.get(source_id)
        if passage is None or passage.source != "glossary":
            # a lesson step (or part), or a catalog entry: named by where it is taught (a
            # catalog title is about one run: "`x` is not a scalar")
            if passage is not None:
                lesson_id, step_id = passage.lesson_id or "", passage.step_id or ""
            elif ":" not in source_id:
                lesson_id, _, step_id = source_id.partition("#")[0].partition("/")
            else:
                return None
            found = self._lesson_step(lesson_id, step_id)
            if found is None:
                return None
            lesson, step = found
            if step is None:
                return Source(id=source_id, title=lesson.title)
            where = _bi(msg.SOURCE_LESSON, lesson=lesson.title)
            return Source(id=source_id, title=step.title, where=where)
        return Source(id=source_id, title=passage.title, where=self._where(passage.lesson_id, None))

    def _lesson_step(
        self, lesson_id: str | None, step_id: str | None
    ) -> tuple[Lesson, Step | None] | None:
        """(lesson, step or None) for ids that may be wrong; None without such a lesson."""
        try:
            lesson = self.course.lesson(lesson_id or "")
        except KeyError:
            return None
        try:
            return lesson, lesson.step(step_id) if step_id else None
        except KeyError:
            return lesson, None

    def _where(self, lesson_id: str | None, step_id: str | None) -> Text | None:
        found = self._lesson_step(lesson_id, step_id)
        if found is None:
            return None
        lesson, step = found
        if step is None:
            return _bi(msg.SOURCE_LESSON, lesson=lesson.title)
        return _bi(msg.SOURCE_STEP, lesson=lesson.title, step=step.title)

    def _compose(
        self,
        hits: Sequence[Hit],
        lang: Lang,
        sources: list[str],
        prefer: str | None = None,
        query: set[str] | None = None,
        lessons: Sequence[str] = (),
        named: list[str] | None = None,
    ) -> list[str]:
        named = [] if named is None else named
        best = hits[0].passage
        if not self._explains(best):
            # an exercise prompt sets a task, it explains nothing: pasting its instructions
            # as the answer reads as a non sequitur; the lesson's reading that matched says it
            readings = [h.passage for h in hits if h.passage.lesson_id == best.lesson_id
                        and h.passage.source == "lesson" and self._explains(h.passage)]
            best = readings[0] if readings else best
        tokens = self.retriever.tokens
        body = summarise(best.text.get(lang), query=query, tokens=tokens)
        parts = [f"**{best.title.get(lang)}**\n\n{body}"]
        sources.append(best.id)
        # a second view from another source, when it is nearly as relevant
        for hit in hits[1:3]:
            p = hit.passage
            if not self._explains(p):
                # an exercise prompt sets a task, it explains nothing: its lesson's reading does
                readings = [
                    h.passage
                    for h in hits
                    if h.passage.lesson_id == p.lesson_id
                    and self._explains(h.passage)
                    and h.passage.source == "lesson"
                ]
                p = readings[0] if readings else p
            if (
                hit.score >= 0.8 * hits[0].score
                and p.lesson_id == best.lesson_id
                and (p.source != best.source)
                and self._explains(p)
                and p.id != best.id
            ):
                parts.append(summarise(p.text.get(lang), SUMMARY_CHARS // 2, query, tokens))
                sources.append(p.id)
                break
        with_code = next((h.passage for h in hits[:2] if h.passage.code), None)
        code = with_code.code_for(lang) if with_code is not None else None
        if code and len(code.splitlines()) <= 10 and "```" not in "".join(parts):
            parts.append(f"{msg.EXAMPLE.get(lang)}\n```python\n{code}\n```")
            if with_code is not None and with_code.id not in sources:
                sources.append(with_code.id)  # the answer shows its code
        read = self._read_line(prefer or _ref(best, hits), lang, named)
        if read:
            parts.append(read)
        from tutor.chat.retrieval import rank_lessons

        ranked = list(lessons) or rank_lessons(hits)
        others = [lid for lid in ranked[:3] if lid not in named][:2]
        if others:
            sep = msg.LIST_SEP.get(lang)
            items = sep.join(self._lesson_title(lid, lang) for lid in others)
            parts.append(msg.SEE_ALSO.format(items=items).get(lang))
            named.extend(others)
        return parts

    def _explains(self, passage: Passage) -> bool:
        """Whether ``passage`` explains (a reading, a definition, an error) rather than sets a
        task: an exercise or quiz prompt asks the learner something, it answers nothing."""
        if passage.source != "lesson":
            return True
        try:
            step = self.course.lesson(passage.lesson_id or "").step(passage.step_id or "")
        except KeyError:
            return False
        return isinstance(step, ReadingStep)

    def _compose_symptom(
        self,
        found: Diagnosed,
        lang: Lang,
        sources: list[str],
        named: list[str],
        titled: list[Source],
    ) -> list[str]:
        """The symptom's likely causes, each explained in general terms with its lesson."""
        text = symptom_text(self.course, found, lang, named)
        for cause in found.causes[:MAX_CAUSES]:
            sources.append(cause.source)
            # titled by the step the text sends the learner to
            source = self._titled(cause.ref) if cause.ref else None
            if source is not None:
                titled.append(source.model_copy(update={"id": cause.source}))
        return [text]

    def _lesson_title(self, lesson_id: str, lang: Lang) -> str:
        try:
            title = self.course.lesson(lesson_id).title.get(lang)
        except KeyError:
            return lesson_id
        return msg.LESSON_ITEM.format(title=title, lesson_id=lesson_id).get(lang)

    def _read_line(self, ref: str | None, lang: Lang, named: list[str] | None = None) -> str | None:
        """ "Read: lesson …, step …" for ``ref``; its lesson is added to ``named``."""
        return read_line(self.course, ref, lang, named)

    def _about_run(
        self, question: str, lang: Lang, context: ChatContext | None, *, about_error: bool = False
    ) -> tuple[str, list[str], str | None, list[Source], bool] | None:
        """(text, sources, lesson ref, titled sources, whether the run's facts say why) about
        the learner's last run, when asked about it (``about_error``: the question asks why
        something errors)."""
        if context is None or (context.last_run is None and not context.diagnoses):
            return None
        var_match = _GRAD_VAR_RE.search(question)
        if not (about_my_run(question) or var_match or about_error):
            return None
        lines = [msg.ABOUT_RUN.get(lang)]
        sources: list[str] = []
        titled: list[Source] = []
        ref: str | None = None
        run = context.last_run
        if run is not None and run.error is not None:
            lines.append(
                msg.RUN_ERROR.format(
                    type=run.error.type, line=run.error.line or "?", message=run.error.message
                ).get(lang)
            )
        found_facts: list[Fact] = []
        if var_match:
            var = var_match.group(1)
            # the facts of the learner's own code and run, as `tutor ask` gives them for a
            # pasted snippet; else what the run's snapshot of the tensor says
            found_facts = self._run_facts_of(context, var)
            snap = _snapshot(context, var) if not found_facts else None
            if found_facts:
                lines.append(text_for(found_facts, lang))
                ref = read_for(found_facts)
            elif snap is not None:
                lines.append(_explain_grad(var, snap).get(lang))
            if found_facts or snap is not None:
                sources.append(f"run:{var}")
                titled.append(Source(id=f"run:{var}", title=msg.SOURCE_RUN.format(var=var)))
        _, step = self._step(context)
        # shown as the Diagnosis tab shows them: a fix that is the step's answer is withheld
        for diagnosis in shown_diagnoses(context.diagnoses[:2], step):
            lines.append(f"**{diagnosis.title.get(lang)}** — {diagnosis.explanation.get(lang)}")
            lines.append(msg.FIX.format(fix=diagnosis.fix.get(lang)).get(lang))
            sources.append(f"diagnosis:{diagnosis.id}")
            titled.append(
                Source(
                    id=f"diagnosis:{diagnosis.id}",
                    title=diagnosis.title,
                    where=self._where(*(diagnosis.lesson_ref or "").partition("/")[::2])
                    if diagnosis.lesson_ref
                    else None,
                )
            )
            ref = ref or diagnosis.lesson_ref
        if len(lines) == 1:
            if run is None or not run.ok:
                return None
            lines.append(msg.RUN_OK.get(lang))
        explained = bool(var_match) and explains_why(found_facts)
        return "\n".join(lines), sources, ref, titled, explained

    def _run_facts_of(self, context: ChatContext, var: str) -> list[Fact]:
        """The run facts (run_facts.py) of the learner's code about ``var.grad``: the code run
        once more with its records, as a pasted snippet is; empty without a sandbox, without
        code that reads ``var.grad``, or when the last run raised (its error says why)."""
        run = context.last_run
        if self.runner is None or not context.code.strip() or (run is not None and run.error):
            return []
        found = [f for f in self._snippet_facts(self.runner, context.code)
                 if f.values.get("name") in (var, "")]
        return found if any(f.values.get("name") == var for f in found) else []

    def _hint(
        self,
        question: str,
        lang: Lang,
        context: ChatContext | None,
        lesson: Lesson | None,
        step: Step | None,
        secrets: Secrets,
    ) -> Answer:
        parts = [msg.REFUSE_SOLUTION.get(lang)]
        level: int | None = None
        hints = list(getattr(step, "hints", []) or [])
        if context is None or step is None or context.step_ref is None:
            near = self._nearest_hints(question, lang)
            if near is not None:
                return self._finish(near, secrets, "", lang)
            parts.append(msg.NO_STEP.get(lang))
        elif not hints:
            parts.append(msg.NO_HINTS.get(lang))
        else:
            ref = context.step_ref
            # One new hint level per attempt, the first for free: the learner's persisted
            # hints_unlocked/attempts alone keep a fresh process (a new `tutor ask`) from
            # unlocking more than attempts + 1 levels by asking again. Within this process
            # a repeated question without a new attempt never unlocks one.
            seen = min(context.hints_unlocked, len(hints))
            given = self._hints_given.get(ref)
            if given is not None:
                seen = max(seen, given[0])
            if given is not None and context.attempts <= given[1]:
                new = False
            else:
                new = seen < min(context.attempts + 1, len(hints))
            level = max(seen + 1 if new else seen, 1)
            repeat = not new and seen > 0
            # a hint that would show a line of some exercise's solution is not cut down to
            # "…": the nearest earlier one is given instead, else the next one that can be
            order = [*range(level, 0, -1), *range(level + 1, len(hints) + 1)]
            shown = next(
                (n for n in order if self._showable(hints[n - 1].get(lang), question, secrets)), 0
            )
            if shown:
                level = shown
                parts.append(
                    msg.HINT.format(
                        level=shown, total=len(hints), hint=hints[shown - 1].get(lang)
                    ).get(lang)
                )
            self._hints_given[ref] = (level, context.attempts)
            if repeat and level < len(hints):
                parts.append(msg.SAME_HINT.get(lang))
            elif level == len(hints):
                parts.append(msg.LAST_HINT.get(lang))
        question = self.guiding_question(lesson, step, lang)
        parts.append(msg.GUIDING.format(question=question).get(lang))
        step_ref = context.step_ref if context is not None and step is not None else None
        answer = Answer(
            text="\n\n".join(parts),
            sources=[step_ref] if step_ref else [],
            titled_sources=[t for t in [self._titled(step_ref)] if t] if step_ref else [],
            refused=True,
            hint_level=level,
            kind="hint",
            lessons=[lesson.id] if lesson else [],
        )
        return self._finish(answer, secrets, "", lang)

    def guiding_question(self, lesson: Lesson | None, step: Step | None, lang: Lang) -> str:
        """The lesson's guiding question where it is about what the step asks (it shares a
        content word with the step's title, prompt or hints: "What is in .grad before your
        second backward()?" for a step on accumulation), else the question about the
        learner's own output: a lesson's question about layer shapes is off the point of its
        training-step exercise."""
        questions = self.glossary.guiding_questions
        own = questions.get(f"{lesson.id}/{step.id}") if lesson and step else None
        if own is not None:
            return own.get(lang)
        guiding = questions.get(lesson.id) if lesson else None
        if guiding is None:
            return msg.GUIDING_DEFAULT.get(lang)
        if step is not None:
            said = " ".join(t.en for t in [step.title, getattr(step, "prompt", None),
                                           getattr(step, "body", None), *step.hints]
                            if t is not None)
            if not _content_words(guiding.en) & _content_words(said):
                return msg.GUIDING_DEFAULT.get(lang)
        return guiding.get(lang)

    def _nearest_hints(self, question: str, lang: Lang) -> Answer | None:
        """A solution request whose exercise is not clear: the first hint of each of the
        exercises nearest to it (by its code, names and words) and a guiding question,
        rather than a bare refusal; None when no exercise is near."""
        near = self.steps.closest(question)
        found = [
            (ref, lesson, step)
            for ref in near
            for lesson, step in [self._lesson_and_step(ref.lesson_id, ref.step_id)]
            if lesson is not None and step is not None and getattr(step, "hints", None)
        ]
        if not found:
            return None
        # an exercise whose first hint would show a line of some exercise's solution is left
        # out rather than shown with "…" in it
        found = [
            (ref, lesson, step)
            for ref, lesson, step in found
            if self._showable(next(iter(getattr(step, "hints", []))).get(lang), question)
        ]
        if not found:
            return None
        lines = []
        for ref, _lesson, step in found:
            hints = list(getattr(step, "hints", []))
            lines.append(
                msg.NEAR_STEP_HINT.format(
                    step=step.title.get(lang), ref=ref.ref, hint=hints[0].get(lang)
                ).get(lang)
            )
        question_text = self.guiding_question(found[0][1], found[0][2], lang)
        parts = [
            msg.REFUSE_SOLUTION.get(lang),
            msg.NEAR_STEPS.get(lang),
            "\n".join(lines),
            msg.NEAR_STEPS_PICK.get(lang),
            msg.GUIDING.format(question=question_text).get(lang),
        ]
        refs = [ref.ref for ref, _, _ in found]
        return Answer(
            text="\n\n".join(parts),
            sources=refs,
            titled_sources=[t for r in refs if (t := self._titled(r))],
            refused=True,
            hint_level=1,
            kind="hint",
            lessons=list(dict.fromkeys(ref.lesson_id for ref, _, _ in found)),
        )

    def _showable(self, text: str, question: str, step: Secrets | None = None) -> bool:
        """Whether ``text`` shows no line of any exercise's solution the question lacks (nor
        anything of ``step``'s secrets)."""
        guards = [course_secrets(self._solution_lines, question), *([step] if step else [])]
        return not any(find_leaks(text, g, question=question).leaked for g in guards)

    def _guard(self, answer: Answer, secrets: Secrets, question: str, lang: Lang) -> Answer:
        report = find_leaks(answer.text, secrets, question=question)
        if not report.leaked:
            return answer
        text = without_bare_redactions(redact(answer.text, secrets, report))
        if find_leaks(text, secrets, question=question).leaked:  # belt and braces
            text = msg.REDACTED_NOTE.get(lang)
        else:
            text += "\n\n" + msg.REDACTED_NOTE.get(lang)
        return answer.model_copy(update={"text": text, "redacted": True})

    @staticmethod
    def _fallback(offline: Answer, notice: str) -> Answer:
        return offline.model_copy(
            update={"text": f"{notice}\n\n{offline.text}", "fallback_notice": notice}
        )

    def _stream_fallback(self, offline: Answer, notice: str, released: str) -> Iterator[str]:
        self.last_answer = self._fallback(offline, notice)
        yield ("\n\n" if released else "") + self.last_answer.text


DOCUMENTED_KINDS = frozenset({"answer", "context"})


def _losses(evidence: Evidence | None) -> list[float]:
    """The values of the losses the run backpropagated, as recorded."""
    return [b.loss for b in (evidence.backwards if evidence is not None else [])
            if isinstance(b.loss, float)]


def _loss_fell(losses: list[float]) -> bool:
    """The loss went down: its last recorded value below :data:`LOSS_FELL` times its first."""
    return len(losses) >= 2 and losses[-1] < LOSS_FELL * losses[0]


def with_documentation(answer: Answer, question: str, lang: Lang) -> Answer:
    """An answer (not a hint, a refusal or a decline), with what torch's documentation says
    of the API the question names (:mod:`tutor.chat.api_docs`): the course's cards cover
    what it teaches, the documentation each name the learner asked about."""
    if answer.refused or answer.kind not in DOCUMENTED_KINDS:
        return answer
    from tutor.chat.api_docs import with_documentation as documented_text

    text = documented_text(answer.text, question, lang)
    return answer if text == answer.text else answer.model_copy(update={"text": text})


def _bi(template: Text, **values: Text) -> Text:
    """``template`` filled with each language's own value."""
    return Text(
        en=template.en.format(**{k: v.en for k, v in values.items()}),
        zh=template.zh.format(**{k: v.zh for k, v in values.items()}),
    )


def _ref(best: Passage, hits: Sequence[Hit]) -> str | None:
    """The lesson step to read for ``best``: its own, or the best lesson passage of its lesson."""
    if best.step_id:
        return f"{best.lesson_id}/{best.step_id}"
    for hit in hits:
        p = hit.passage
        if p.source == "lesson" and p.lesson_id == best.lesson_id and p.step_id:
            return f"{p.lesson_id}/{p.step_id}"
    return best.lesson_id


def _checked_exprs(step: Step | None, context: ChatContext | None) -> list[str]:
    """The expressions the step checks ("x.grad", "z.grad_fn"): asking for their value on
    that step is asking for its answer."""
    exprs = list(context.expected_by_expr) if context else []
    if isinstance(step, (CodeStep, FixStep)):
        for check in step.checks:
            if isinstance(check, ValueCheck):
                exprs.append(check.expr)
            elif isinstance(check, AttributeCheck):
                attr = "grad" if check.attribute == "grad_is_none" else check.attribute
                exprs.append(f"{check.expr}.{attr}")
    elif isinstance(step, AnswerStep):
        exprs.append(step.expr)
    return exprs


def _code_parts(step: Step | None) -> list[str]:
    """The functions/classes the step's starter has the learner write or complete."""
    if isinstance(step, (CodeStep, FixStep)):
        return step_code_parts(step.starter)
    return []


def _snapshot(context: ChatContext, var: str) -> TensorSnapshot | None:
    from tutor.sandbox.models import TensorSnapshot

    run = context.last_run
    if run is None:
        return None
    for probe in run.probes:
        if probe.expr == var and isinstance(probe.value, TensorSnapshot):
            return probe.value
    if run.error is not None and isinstance(run.error.locals.get(var), TensorSnapshot):
        return run.error.locals[var]  # type: ignore[return-value]
    return None


def _explain_grad(var: str, snap: TensorSnapshot) -> Text:
    if not snap.requires_grad:
        return msg.GRAD_NO_REQUIRES.format(var=var)
    if not snap.is_leaf:
        return msg.GRAD_NON_LEAF.format(var=var, grad_fn=snap.grad_fn or "an operation")
    if snap.grad is None:
        return msg.GRAD_NOT_REACHED.format(var=var)
    return msg.GRAD_PRESENT.format(var=var, shape=tuple(snap.grad.shape))


QUOTED_CHARS = 25
"""A line of a lesson passage this long found in an answer: the answer quotes the lesson."""


def _quotes(text: str, passage: Passage) -> bool:
    """Whether ``text`` shows a line of ``passage`` (in either language, or its code)."""
    lines = "\n".join((passage.text.en, passage.text.zh, passage.code or "")).splitlines()
    return any(len(line.strip()) >= QUOTED_CHARS and line.strip() in text for line in lines)


def _release_point(text: str) -> int:
    """How much of a streamed reply can be checked and shown: up to the last paragraph break
    that is outside a code block (0: nothing yet)."""
    cut = start = 0
    for piece in fenced_pieces(text):
        end = start + len(piece.source)
        # A fence's last line end and the prose's first make a blank line too.
        blank = text.rfind("\n\n", max(start - 1, 0), end) if piece.code is None else -1
        if blank >= 0:
            cut = blank + 2
        start = end
    return cut


_GUIDING_COMMON = frozenset({
    "which", "what", "does", "your", "code", "should", "where", "when", "each", "tensor",
    "tensors", "have", "must", "with", "from", "that", "this", "there", "them", "they",
    "looking", "happens", "small", "like", "step", "steps", "line", "lines",
})


def _content_words(text: str) -> set[str]:
    """What an English text is about, roughly: the first four letters of each of its words of
    four letters or more (``x.grad`` and "gradients" both give "grad"), without the common
    ones."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    return {w[:4] for w in words if len(w) >= 4 and w not in _GUIDING_COMMON}
