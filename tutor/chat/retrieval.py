"""Retrieval by concept first, passage second, with one explainable fused score.

Two BM25 indexes over the same tokens (English words, Chinese bigrams, API names):

- **concept**: one document per lesson (title, summary, plain-words description from
  ``concepts.yaml``, step titles, readings). It says which lesson's *topic* a question is
  about, including questions that name no API ("the values I pass into backward(...)").
- **passages**: reading parts, exercise prompts, glossary entries, catalog entries. They say
  which text answers it. A passage votes for the lessons of its own topic (``IndexData.topics``:
  a catalog entry is shared among the lessons its words are about, not only its lesson_ref).

Each lesson's score is ``prior * (W_CONCEPT * concept + W_PASSAGE * best passage vote)``, both
parts scaled to the best lesson, plus ``W_PASTED * pasted-error vote`` when the question quotes
an error message the diagnosis catalog knows (its own message regexes decide, not word overlap):
the lessons whose steps quote that message vote with their best such step's score for this
question (a loop question goes to the step about the loop), or, where no lesson quotes it, the
matching catalog entries vote for their ``lesson_ref``. A passage's score is its BM25 score
times its kind's weight, the question kind's preference (a "what is" question prefers
definitions, a pasted error the catalog entry whose message regex it matches) and the score of
the lesson it is about.
:meth:`Retriever.explain` prints all of it for one question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from tutor.chat.bm25 import BM25
from tutor.chat.concepts import load_concepts, name_patterns, named_lessons
from tutor.chat.cues import PREFIX as CUE_PREFIX
from tutor.chat.index import IndexData, build_index, index_tokens, joinable_words, synonym_tokens
from tutor.chat.intents import about_whole_lessons, kind_preference, question_kinds
from tutor.chat.models import Glossary, Passage
from tutor.chat.spelling import Speller
from tutor.chat.tokens import identifiers, tokenize
from tutor.chat.topicality import Topicality, TopicEvidence

W_CONCEPT = 0.4
W_PASSAGE = 0.6
KIND_WEIGHT = {"reading": 1.0, "glossary": 1.0, "catalog": 0.85, "exercise": 0.75}
"""Readings teach the concept; glossary entries define it; catalog entries explain one error;
an exercise prompt describes a task, so it answers a question least often."""
PASTED_ERROR = 1.6
"""A catalog entry whose message regex matches the question: the learner pasted that error."""
W_PASTED = 0.6
"""Weight of the pasted-error vote: a quoted message says which lessons teach it more surely
than the words around it, but the words still pick among those lessons."""
W_NAMED = 0.4
"""A lesson the question names as a lesson ("the detach lesson", "复习题"): the learner says
where they are, which outweighs a near tie of the words but not a question about elsewhere."""
TITLE_NAMES = 0.6
"""A definition question ("what is a leaf tensor", "什么是叶子张量") is answered by the entry
*named* by its words, not one whose text mentions them ("retain_grad(): gradients of non-leaf
tensors"): a glossary entry gains up to this share for the query weight its title holds."""
ORPHAN_SUPPORT = 0.5
"""A passage about a lesson the course lacks (a glossary entry) still answers, at half weight."""


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float


@dataclass
class Retrieval:
    """The outcome of one question: passages and lessons, best first, and the evidence."""

    hits: list[Hit]
    lessons: list[str]
    lesson_scores: dict[str, float] = field(default_factory=dict)
    concept_scores: dict[str, float] = field(default_factory=dict)
    pasted_scores: dict[str, float] = field(default_factory=dict)
    """Lesson -> vote from a pasted error message (empty when none was pasted)."""
    top_score: float = 0.0
    """The best raw BM25 score of a passage: how well the words matched at all."""
    coverage: float = 0.0
    kinds: list[str] = field(default_factory=list)
    query: list[str] = field(default_factory=list)


class Retriever:
    def __init__(self, data: IndexData):
        self.data = data
        self.passages = data.passages
        self.glossary = data.glossary
        self.joinable = joinable_words(data.glossary)
        self.synonyms = synonym_tokens(data.glossary)
        self.index = BM25(data.passage_tokens)
        self.lesson_index = BM25(data.lesson_tokens) if data.lesson_tokens else None
        self._lesson_terms = [set(tokens) for tokens in data.lesson_tokens]
        self.kinds = _passage_kinds(data)
        self.main_topic = [max(t, key=t.__getitem__) if t else None for t in data.topics]
        self.patterns = {
            i: re.compile(p.pattern, re.IGNORECASE)
            for i, p in enumerate(self.passages)
            if p.pattern and _compiles(p.pattern)
        }
        self.fragments = {
            i: _literal_fragments(self.passages[i].pattern or "") for i in self.patterns
        }
        targets = {
            part
            for e in data.glossary.entries
            for t in e.terms
            for part in t.lower().split(".")
            if len(part) >= 4
        } | {
            w
            for w in [*data.glossary.topic_words, *data.glossary.broad_topic_words]
            if w.isascii() and " " not in w
        }
        self.speller = Speller(targets, data.corpus_words)
        # plain tokens: a concept cue ("~grows") does not make a question about autograd
        self.topic_tokens = self._word_tokens(data.glossary.topic_words)
        self.broad_tokens = self._word_tokens(data.glossary.broad_topic_words)
        self.topicality = Topicality(
            tokens=self.tokens,
            topic_words=data.glossary.topic_words,
            broad_words=data.glossary.broad_topic_words,
            api_parts={
                part.strip("()")
                for e in data.glossary.entries
                for t in e.terms
                for part in t.lower().split(".")
                if len(part.strip("()")) >= 2
            },
            vocabulary={
                tok
                for tokens in [*data.passage_tokens, *data.lesson_tokens]
                for tok in tokens
                if not tok.startswith(CUE_PREFIX)
            },
            joinable=self.joinable,
        )
        self.title_tokens = [
            set(self.tokens(f"{p.title.en} {p.title.zh}")) if p.source == "glossary" else set()
            for p in self.passages
        ]
        self.lesson_names = name_patterns(load_concepts())
        self._known_terms = {
            t.lower() for e in data.glossary.entries for t in e.terms if len(t) > 3
        }

    @cached_property
    def quoting(self) -> dict[int, list[int]]:
        """Catalog passage -> the lesson passages that quote its error message (built when a
        question first pastes one: most questions do not, and the scan costs tens of ms)."""
        lessons = [(j, _quotable(q)) for j, q in enumerate(self.passages) if q.source == "lesson"]
        return {i: [j for j, text in lessons if self._quotes(i, text)] for i in self.patterns}

    def _word_tokens(self, words: Sequence[str]) -> set[str]:
        return {tok for word in words for tok in tokenize(word, joinable=self.joinable)}

    @classmethod
    def build(
        cls,
        passages: Sequence[Passage],
        glossary: Glossary,
        lesson_docs: dict[str, str] | None = None,
        priors: dict[str, float] | None = None,
    ) -> Retriever:
        return cls(build_index(passages, glossary, lesson_docs, priors))

    # ------------------------------------------------------------------ query side

    def correct(self, question: str) -> str:
        """The question with misspelt API names and words fixed and synonyms mapped."""

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            parts = word.split(".")
            fixed = [self.speller.correct(p) if len(p) >= 5 else p for p in parts]
            out = ".".join(fixed)
            return self.glossary.synonyms.get(out.lower(), out)

        corrected = re.sub(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", fix, question)
        for word, replacement in self.glossary.synonyms.items():
            if not word.isascii() and word in corrected:
                corrected = corrected.replace(word, f"{word} {replacement}")
        return corrected

    def tokens(self, text: str) -> list[str]:
        return index_tokens(text, joinable=self.joinable, synonyms=self.synonyms)

    def on_topic(self, question: str) -> bool:
        """Whether the question uses any autograd/PyTorch vocabulary (after corrections): a
        precondition, not the judgement (see :meth:`judge`)."""
        corrected = self.correct(question)
        if set(self.tokens(corrected)) & (self.topic_tokens | self.broad_tokens):
            return True
        return any(i.lower() in self._known_terms or "." in i for i in identifiers(corrected))

    def judge(
        self, question: str, retrieval: Retrieval | None = None, *, on_step: bool = False
    ) -> TopicEvidence:
        """Whether ``question`` is about autograd, with the evidence (see ``topicality.py``);
        ``retrieval``: this question's, if already done (else only the words are weighed);
        ``on_step``: the learner is on an exercise."""
        corrected = self.correct(question)
        # a pasted catalog message is evidence when it is an autograd error: one whose own
        # words are the course's ("element 0 of tensors does not require grad"), not one plain
        # Python raises too ("'NoneType' object is not subscriptable")
        quoted = [q for i in self.patterns if (q := self._quoted(i, question))]
        pasted = any(self.topicality.anchors(q)[0] > 0 for q in quoted)
        # on an exercise, a plain Python error is the learner's course code's
        plain = not on_step and self.topicality.plain_error(question, autograd_error=pasted)
        if retrieval is None:
            return self.topicality.judge(
                corrected, pasted_error=pasted, plain_error=plain, catalog_error=bool(quoted)
            )
        return self.topicality.judge(
            corrected,
            top_score=retrieval.top_score,
            coverage=retrieval.coverage,
            lesson_scores=retrieval.lesson_scores,
            pasted_error=pasted,
            plain_error=plain,
            catalog_error=bool(quoted),
        )

    # ------------------------------------------------------------------ scoring

    def retrieve(
        self, question: str, *, limit: int = 8, exclude: frozenset[str] = frozenset()
    ) -> Retrieval:
        query = self.tokens(self.correct(question))
        kinds = question_kinds(question)
        raw = self.index.scores(query)
        pasted = [i for i in self.patterns if self._quotes(i, question)]
        if pasted and "error" not in kinds:  # a quoted message is an error question, however worded
            kinds = [*kinds, "error"]
        prefer = kind_preference(kinds)
        pasted_set = set(pasted)
        for i in pasted:  # a pasted error counts even if few words match
            raw[i] = max(raw.get(i, 0.0), 1.0) * PASTED_ERROR
        adjusted = {
            i: s * KIND_WEIGHT[self.kinds[i]] * prefer.get(self.kinds[i], 1.0)
            for i, s in raw.items()
            if self.passages[i].id not in exclude
        }
        if "definition" in kinds:
            for i in adjusted:
                adjusted[i] *= 1.0 + TITLE_NAMES * self._title_share(i, query)
        concept = self._concept_scores(query)
        votes: dict[str, float] = {}
        known = set(self.data.lesson_ids)
        for i, s in adjusted.items():
            if i in pasted_set:  # its routing is the pasted vote: the same evidence once
                continue
            for lesson, share in self.data.topics[i].items():
                if lesson in known or not known:  # a glossary may name lessons not in the course
                    votes[lesson] = max(votes.get(lesson, 0.0), s * share)
        context = (
            self.index.scores(self.tokens(self.correct(self._without_messages(question, pasted))))
            if pasted
            else {}
        )
        pasted_votes = self._pasted_votes(pasted, context, raw, exclude)
        named = named_lessons(question, self.lesson_names)
        priors = {} if about_whole_lessons(kinds) else self._priors(kinds)
        # a lesson named as the one the learner is on: its prior (a gathering lesson starts
        # lower) does not apply, and the naming itself is a vote
        priors = {lid: 1.0 if lid in named else prior for lid, prior in priors.items()}
        fused = _fuse(concept, votes, priors, pasted_votes)
        for lesson in named:
            if lesson in fused or lesson in known:
                fused[lesson] = fused.get(lesson, 0.0) + W_NAMED
        lessons = sorted(fused, key=lambda k: (-fused[k], k))
        best = fused[lessons[0]] if lessons else 0.0
        scored = {
            i: s * self._support(i, fused, known) / (best or 1.0) for i, s in adjusted.items()
        }
        order = sorted(scored, key=lambda i: (-scored[i], self.passages[i].id))
        order = self._lead_with(order, lessons[0] if lessons else None, exclude)
        hits = [Hit(self.passages[i], scored.get(i, 0.0)) for i in order[:limit]]
        return Retrieval(
            hits=hits,
            lessons=lessons,
            lesson_scores=fused,
            concept_scores=concept,
            pasted_scores=pasted_votes,
            top_score=max(raw.values(), default=0.0),
            coverage=self._coverage(query, lessons[0] if lessons else None),
            kinds=kinds,
            query=query,
        )

    def search(
        self, question: str, *, limit: int = 8, exclude: frozenset[str] = frozenset()
    ) -> list[Hit]:
        return self.retrieve(question, limit=limit, exclude=exclude).hits

    def _priors(self, kinds: list[str]) -> dict[str, float]:
        """Lesson priors for a question of ``kinds``: none for a lesson that is its home."""
        homes = self.data.homes
        return {
            lid: 1.0 if set(homes.get(lid, ())) & set(kinds) else prior
            for lid, prior in self.data.priors.items()
        }

    def without_quoted_messages(self, question: str) -> str:
        """``question`` less the catalog error messages it quotes (the learner's own words)."""
        return self._without_messages(
            question, [i for i in self.patterns if self._quotes(i, question)]
        )

    def _without_messages(self, question: str, pasted: list[int]) -> str:
        """``question`` less the error messages it quotes: what the learner says around them."""
        for i in pasted:
            question = self.patterns[i].sub(" ", question)
            for fragment in self.fragments[i]:
                question = re.sub(re.escape(fragment), " ", question, flags=re.IGNORECASE)
        return question

    def speaks_of(self, passage: Passage, question: str) -> bool:
        """Whether ``passage`` may answer ``question``. A catalog entry explains one error or
        one mistake: it answers a question that quotes its message or names one of its code
        names (an API, an exception, an argument); one that shares only plain words with it
        ("epoch", "slow") asks about something else. Other passages teach: always."""
        if passage.source != "catalog":
            return True
        i = self._position.get(passage.id)
        if i is not None and i in self.patterns and self._quotes(i, question):
            return True
        own = " ".join(
            [passage.title.en, passage.text.en, passage.keywords, passage.pattern or ""])
        return bool(_code_names(own) & _code_names(question))

    @cached_property
    def _position(self) -> dict[str, int]:
        return {p.id: i for i, p in enumerate(self.passages)}

    def quotes_message(self, text: str) -> bool:
        """Whether ``text`` quotes an error message the diagnosis catalog knows."""
        return any(self._quotes(i, text) for i in self.patterns)

    def quoted_by(self, text: str) -> list[int]:
        """The catalog passages whose error message ``text`` quotes, the longest match first
        (the most specific message: a loop's "backward twice" before the plain one)."""
        found = [(len(self._quoted(i, text)), i) for i in self.patterns if self._quotes(i, text)]
        return [i for _, i in sorted(found, key=lambda t: -t[0])]

    def _quotes(self, i: int, text: str) -> bool:
        """Whether ``text`` quotes the error message of catalog passage ``i``: its regex
        matches, or a long literal part of it is there (a message cut short with "...")."""
        if self.patterns[i].search(text):
            return True
        lowered = text.lower()
        return any(fragment in lowered for fragment in self.fragments[i])

    def _quoted(self, i: int, text: str) -> str:
        """The part of ``text`` that quotes catalog passage ``i``'s message ('' if none)."""
        match = self.patterns[i].search(text)
        if match:
            return match.group(0)
        lowered = text.lower()
        return next((f for f in self.fragments[i] if f in lowered), "")

    def _pasted_votes(
        self,
        pasted: list[int],
        context: dict[int, float],
        raw: dict[int, float],
        exclude: frozenset[str],
    ) -> dict[str, float]:
        """Lesson -> vote for a question quoting the messages of catalog passages ``pasted``:
        the best score of the lesson's steps that quote a message on the words *around* the
        message (``context``: where the learner says what they did, which picks the step);
        for a message no step quotes, the score of each matching entry for its lesson_ref."""
        votes: dict[str, float] = {}
        known = set(self.data.lesson_ids)
        for i in pasted:
            quoting = [j for j in self.quoting[i] if self.passages[j].id not in exclude]
            if quoting:
                for j in quoting:
                    lesson = self.passages[j].lesson_id or ""
                    # a quoting step the question's words miss still teaches the message
                    votes[lesson] = max(votes.get(lesson, 0.0), context.get(j, 0.0) + 1.0)
            elif (owner := self.passages[i].lesson_id) and (owner in known or not known):
                votes[owner] = max(votes.get(owner, 0.0), raw.get(i, 0.0))
        return votes

    def _title_share(self, i: int, query: list[str]) -> float:
        """Share of the query's weight (idf) that passage ``i``'s title holds (glossary only)."""
        title = self.title_tokens[i]
        if not title:
            return 0.0
        words = {t for t in query if not t.startswith(CUE_PREFIX)}
        total = sum(self.index.idf.get(t, 0.0) for t in words)
        found = sum(self.index.idf.get(t, 0.0) for t in words if t in title)
        return found / total if total else 0.0

    def _support(self, i: int, fused: dict[str, float], known: set[str]) -> float:
        """How much the lessons passage ``i`` is about count for this question."""
        topic = self.data.topics[i]
        if known and not (set(topic) & known):  # about a lesson this course does not have
            return ORPHAN_SUPPORT * max(fused.values(), default=1.0)
        return sum(share * fused.get(lesson, 0.0) for lesson, share in topic.items())

    def _concept_scores(self, query: list[str]) -> dict[str, float]:
        if self.lesson_index is None:
            return {}
        scores = self.lesson_index.scores(query)
        return {self.data.lesson_ids[i]: s for i, s in scores.items()}

    def _lead_with(
        self, order: list[int], lesson: str | None, exclude: frozenset[str]
    ) -> list[int]:
        """``order`` with the best passage about ``lesson`` first, so the text shown is about
        the lesson named first; the lesson's first reading if none of its passages matched."""
        first = self.main_topic[order[0]] if order else None
        if lesson is None or (order and (first == lesson or first not in self.data.lesson_ids)):
            return order  # already about it, or a glossary entry for a lesson the course lacks
        for pos, i in enumerate(order):
            if self.main_topic[i] == lesson:
                return [i, *order[:pos], *order[pos + 1 :]]
        for i, p in enumerate(self.passages):
            if self.main_topic[i] == lesson and self.kinds[i] == "reading" and p.id not in exclude:
                return [i, *order]
        return order

    def _coverage(self, query: list[str], lesson: str | None) -> float:
        """Share of the query's weight (idf over lessons) found in ``lesson``'s document."""
        if lesson not in self.data.lesson_ids or self.lesson_index is None or not query:
            return 0.0
        terms = self._lesson_terms[self.data.lesson_ids.index(lesson)]
        size = self.lesson_index.size
        unknown = math.log(1 + (size + 0.5) / 0.5)
        total = found = 0.0
        for token in set(query):
            idf = self.lesson_index.idf.get(token, unknown)
            total += idf
            if token in terms:
                found += idf
        return found / total if total else 0.0

    def explain(self, question: str) -> str:
        """Why the question went where it went: kinds, lesson scores, best passages."""
        r = self.retrieve(question)
        t = self.judge(question, r)
        lines = [
            f"query: {r.query}",
            f"kinds: {r.kinds}  coverage: {r.coverage:.2f}  topic: {t.reason} (anchors "
            f"{t.anchors}, foreign {sorted(t.foreign)}, vocabulary {t.vocabulary:.2f}, "
            f"margin {t.margin:.2f})",
        ]
        for lesson in r.lessons[:4]:
            lines.append(
                f"  {lesson:14} fused {r.lesson_scores[lesson]:.3f}  "
                f"concept {r.concept_scores.get(lesson, 0.0):6.2f}  "
                f"pasted {r.pasted_scores.get(lesson, 0.0):6.2f}  "
                f"prior {self.data.priors.get(lesson, 1.0):.2f}"
            )
        for hit in r.hits[:4]:
            lines.append(f"  {hit.score:7.2f}  {hit.passage.id}")
        return "\n".join(lines)


def _fuse(
    concept: dict[str, float],
    votes: dict[str, float],
    priors: dict[str, float],
    pasted: dict[str, float] | None = None,
) -> dict[str, float]:
    pasted = pasted or {}
    top_concept = max(concept.values(), default=0.0) or 1.0
    top_vote = max(votes.values(), default=0.0) or 1.0
    top_pasted = max(pasted.values(), default=0.0) or 1.0
    return {
        lesson: priors.get(lesson, 1.0)
        * (
            W_CONCEPT * concept.get(lesson, 0.0) / top_concept
            + W_PASSAGE * votes.get(lesson, 0.0) / top_vote
        )
        + W_PASTED * pasted.get(lesson, 0.0) / top_pasted
        for lesson in set(concept) | set(votes) | set(pasted)
    }


FRAGMENT_CHARS = 24
"""A literal part of a message regex this long is quoted, not said in passing."""


def _literal_fragments(pattern: str) -> list[str]:
    """The literal runs of a message regex (lowercased) of FRAGMENT_CHARS or more: the parts
    of the message a learner pastes even when they cut the rest."""
    text = re.sub(r"\(?P<\w+>[^)]*\)|\(\?[:!=][^)]*\)", "\0", pattern)  # groups: unknown text
    text = re.sub(r"\\([^A-Za-z0-9])", r"\1", text)  # escaped punctuation is literal
    runs = re.split(r"\\[A-Za-z]|[\0\[\](){}?*+|^$]|\.(?=[*+?])", text)
    out = []
    for run in runs:
        run = run.strip(" :;,.!").lower()
        if len(run) >= FRAGMENT_CHARS:
            out.append(run)
    return out


def _quotable(passage: Passage) -> str:
    """The text of a lesson passage an error message can be quoted in."""
    return " ".join([passage.text.en, passage.code or "", passage.keywords])


def _passage_kinds(data: IndexData) -> list[str]:
    return [
        p.source if p.source != "lesson" else ("reading" if data.readings[i] else "exercise")
        for i, p in enumerate(data.passages)
    ]


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error:
        return False
    return True


def rank_lessons(hits: Sequence[Hit]) -> list[str]:
    """Lesson ids by their best passage's score, best first (for a plain list of hits)."""
    best: dict[str, float] = {}
    for hit in hits:
        lesson = hit.passage.lesson_id
        if lesson and hit.score > best.get(lesson, 0.0):
            best[lesson] = hit.score
    return sorted(best, key=lambda k: -best[k])


_CODE_NAME_RE = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*")
"""A name only code has: dotted (``x.grad``), snake_case (``initial_lr``), camelCase or
CamelCase (``OneCycleLR``, ``KeyError``)."""


def _code_names(text: str) -> set[str]:
    return {m.group(0).lower().strip("._") for m in _CODE_NAME_RE.finditer(text)}
