"""Is a question ABOUT autograd, tensors and training in PyTorch? The on-topic judgement.

One PyTorch-sounding word does not make a question about the course: "the best GPU for
gaming under 500", "fix my flask app, it returns 500", "write my weekly report, say I learnt
PyTorch" name the field but are about buying, a web app, a writing task. The judgement weighs
three kinds of evidence (:class:`TopicEvidence` keeps them, for tests and ``explain``):

- **anchors**: the course's own vocabulary in the question: topic words (gradient, backward,
  张量) count 1, broad words that only place it near PyTorch (GPU, model, 显卡) 1/2; an API
  expression (``x.grad``, ``torch.cuda.is_available()``), a code name of the course (``fc1``,
  ``mat1``) or a pasted error message the diagnosis catalog knows count 1;
- **foreign**: distinct words of other domains (``domains.yaml``: web frameworks, shopping,
  writing tasks, other school subjects, everyday life);
- **vocabulary**: the share of the question's content words the course uses at all, and the
  retrieval's own evidence (the best passage's score, the best lesson's coverage of the
  question and its margin over the next lesson).

A question with more foreign words than anchors is about the other domain. One with a topic
anchor is on topic. One with only broad anchors must be carried by its content words (most of
them in the course's vocabulary) or by a retrieval that found one clear lesson for them; one
with no anchor at all by both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tutor.chat.domains import ERROR_LINE_RE, foreign_words, setup_domain, task_request
from tutor.chat.tokens import CJK_RE, ZH_STOP_BIGRAMS, identifiers, tokenize

BROAD_WEIGHT = 0.5
"""A broad word (GPU, model, 训练) is half an anchor: it places, it does not make, a topic."""
VOCABULARY_ON_TOPIC = 0.7
"""Without a topic anchor: this share of the content words are words the course uses..."""
STRONG_SCORE = 9.0
"""...and/or the retrieval found one clear lesson: the best passage matches this well (BM25)
(with the margin below)..."""
COVERAGE_ON_TOPIC = 0.6
"""...or the best lesson's concept document holds this share of the question's weight."""
MARGIN_ON_TOPIC = 0.15
"""A strong match spread evenly over several lessons is a coincidence of common words: the
best lesson must lead the next by this share of its score."""
_CJK_RUN_RE = re.compile(f"{CJK_RE.pattern}+")
_CODE_NAME_RE = re.compile(r"[a-z]+[0-9]+|[a-z]+_[a-z_0-9]+")
_SETUP_API_RE = re.compile(r"torch\.(cuda|backends|version|mps|utils\.collect_env)\b")
"""The APIs that inspect the machine (``torch.cuda.is_available()``, ``torch.version.cuda``):
they place a question near PyTorch, as a broad word does, not in autograd."""
"""A code name (``fc1``, ``mat2``, ``grad_fn``): one the course uses is an anchor."""


@dataclass(frozen=True)
class TopicEvidence:
    anchors: float
    """Topic words 1, broad words 1/2, API expressions 1 (distinct)."""
    topic_anchor: bool
    """At least one topic word or API expression (not only broad words)."""
    foreign: dict[str, str]
    vocabulary: float
    """Share of content words (English words, Chinese characters) the course uses."""
    top_score: float
    coverage: float
    margin: float
    task: bool = False
    """A request to produce writing or another subject's homework (see ``task_request``)."""
    plain_error: bool = False
    """It quotes a Python error whose message says nothing of tensors or autograd and that
    the catalog does not explain as an autograd error (a KeyError in a dict, a scraper's
    NoneType): see :func:`plain_error`."""
    catalog_error: bool = False
    """It quotes an error message the diagnosis catalog explains (autograd's or plain Python's)."""
    names_pytorch: bool = True
    """It names PyTorch (``torch``, ``pytorch``): another framework named alongside is compared."""
    asked_foreign: bool = False
    """The clause that asks (which / how / 吗 / 怎么 ... ?) names another domain's thing."""
    compared_with_pytorch: bool = False
    """It names PyTorch as what another tool is compared with ("like in PyTorch") and pastes
    no PyTorch code: the question is that tool's."""
    asked_framework: bool = False
    """A clause that asks names another framework and not PyTorch ("how can I do this in
    Caffe2?", "paddle 的参数怎么更新？"): the question is that framework's, whatever PyTorch
    it names as a reference elsewhere."""
    setup: str | None = None
    """A domain of the learner's setup it names (installing, versions, git, another
    framework, buying hardware: ``setup_domains``), if any."""

    @property
    def reason(self) -> str:
        """'foreign' (about another domain), 'plain-error' (a plain Python error, nothing
        about autograd around it), 'anchor' (names autograd), 'content' (on topic by its
        content words and the retrieval) or 'none'."""
        # another framework named beside PyTorch is a comparison, not a foreign word
        counted = {w for w, d in self.foreign.items()
                   if not (d == "frameworks" and self.names_pytorch)}
        if self.task or (counted and len(counted) > self.anchors):
            return "foreign"
        if self.asked_framework or self.compared_with_pytorch:
            return "foreign"
        # what it asks is the other domain's ("which GPU should I buy for training?"), or it
        # is about the learner's setup (CUDA versions, git), and nothing of autograd proper
        # is named anywhere: the other domain's question
        if (self.asked_foreign or self.setup is not None) and not self.topic_anchor:
            return "foreign"
        if "frameworks" in self.foreign.values() and not self.names_pytorch:
            return "foreign"
        # a plain error the catalog explains (a None .grad multiplied) is the course's when
        # the rest of the question speaks its words; a scraper's traceback around it is not
        if (
            self.plain_error
            and not self.topic_anchor
            and not (self.catalog_error and self.vocabulary >= VOCABULARY_ON_TOPIC)
        ):
            return "plain-error"
        if self.topic_anchor:
            return "anchor"
        found = self.coverage >= COVERAGE_ON_TOPIC or (
            self.top_score >= STRONG_SCORE and self.margin >= MARGIN_ON_TOPIC
        )
        known = self.vocabulary >= VOCABULARY_ON_TOPIC
        # near PyTorch (a GPU, a model): the course's words or one clear lesson decide;
        # in plain words only: both must
        if (self.anchors > 0 and (known or found)) or (known and found):
            return "content"
        return "none"

    @property
    def on_topic(self) -> bool:
        return self.reason in ("anchor", "content")


class Topicality:
    """Judges questions against one course's vocabulary (see the module docstring)."""

    def __init__(
        self,
        *,
        tokens: Callable[[str], list[str]],
        topic_words: Iterable[str],
        broad_words: Iterable[str],
        api_parts: Iterable[str],
        vocabulary: Iterable[str],
        joinable: frozenset[str],
    ):
        """``tokens``: the retrieval's tokenizer (synonyms mapped, so "导数" and "梯度" are one
        anchor, not two); ``vocabulary``: every token of the course's passages and lessons."""
        self.tokens = tokens
        self.topic_tokens = frozenset(t for w in topic_words for t in tokens(w))
        self.broad_tokens = frozenset(t for w in broad_words for t in tokens(w)) - self.topic_tokens
        self.api_parts = frozenset(api_parts)
        self.vocabulary = frozenset(vocabulary)
        self.joinable = joinable

    def anchors(self, question: str, *, pasted_error: bool = False) -> tuple[float, bool]:
        """(weight of the course's vocabulary in ``question``, whether a topic anchor is in)."""
        tokens = set(self.tokens(question))
        topic = tokens & self.topic_tokens
        broad = (tokens & self.broad_tokens) - topic
        apis = {i.lower() for i in identifiers(question) if self._is_api(i)}
        machine = {a for a in apis if _SETUP_API_RE.match(a)}
        # their parts ("is_available") are no code name of the course's either
        parts = {p for a in machine for p in a.split(".")}
        names = {t for t in tokens if _CODE_NAME_RE.fullmatch(t) and t in self.vocabulary}
        strong = len(topic) + len((apis - machine) | (names - parts)) + int(pasted_error)
        return strong + BROAD_WEIGHT * (len(broad) + len(machine)), strong > 0

    def _is_api(self, ident: str) -> bool:
        """``x.grad``, ``torch.cuda.is_available``, ``loss.item``: a dotted name with a part the
        course's API uses (``node.js``, ``main.py`` are not)."""
        parts = [p for p in ident.lower().split(".") if p]
        if len(parts) < 2:
            return False
        return parts[0] in ("torch", "nn", "f") or any(
            p in self.api_parts or p in self.topic_tokens for p in parts[1:]
        )

    def plain_error(self, question: str, *, autograd_error: bool = False) -> bool:
        """Whether ``question`` quotes Python errors none of which names anything of the
        course (no topic, broad or API word in the message) and ``autograd_error`` is false
        (the catalog knows none of them as an autograd error)."""
        messages = ERROR_LINE_RE.findall(question)
        if not messages or autograd_error:
            return False
        return not any(self.anchors(m.partition(":")[2])[0] > 0 for m in messages)

    def vocabulary_share(self, question: str) -> float:
        """Share of the content words of ``question`` the course uses: English words (stemmed,
        no stop words) and Chinese characters (a character counts when a bigram it is part of
        is in the course; characters only in filler bigrams are left out)."""
        words = [t for t in tokenize(_without_cjk(question), joinable=self.joinable) if t.isascii()]
        units = len(words)
        known = sum(w in self.vocabulary for w in words)
        for run in _CJK_RUN_RE.findall(question):
            for i, ch in enumerate(run):
                grams = [run[j : j + 2] for j in (i - 1, i) if j >= 0 and j + 2 <= len(run)]
                content = [g for g in grams if g not in ZH_STOP_BIGRAMS] or ([] if grams else [ch])
                if not content:
                    continue
                units += 1
                known += any(g in self.vocabulary for g in content)
        return known / units if units else 0.0

    def judge(
        self,
        question: str,
        *,
        top_score: float = 0.0,
        coverage: float = 0.0,
        lesson_scores: dict[str, float] | None = None,
        pasted_error: bool = False,
        plain_error: bool = False,
        catalog_error: bool = False,
    ) -> TopicEvidence:
        """The evidence for ``question`` (already typo-corrected), with the retrieval's figures;
        ``pasted_error``: it contains an error message the diagnosis catalog explains as an
        autograd error (one plain Python raises too, "'NoneType' object is not subscriptable",
        is no evidence: the question's other words decide); ``plain_error``: it quotes a plain
        Python error (:meth:`plain_error`, on the question as written); ``catalog_error``: it
        quotes a message the catalog explains, autograd's or not."""
        anchors, topic_anchor = self.anchors(question, pasted_error=pasted_error)
        scores = sorted((lesson_scores or {}).values(), reverse=True)
        margin = (scores[0] - scores[1]) / scores[0] if len(scores) > 1 and scores[0] else 1.0
        foreign = foreign_words(question)
        return TopicEvidence(
            anchors=anchors,
            topic_anchor=topic_anchor,
            foreign=foreign,
            task=task_request(question, foreign),
            plain_error=plain_error,
            catalog_error=catalog_error,
            vocabulary=self.vocabulary_share(question),
            top_score=top_score,
            coverage=coverage,
            margin=margin,
            # (a commented-out `# import torch as flow` is the line the learner swapped out)
            names_pytorch=_PYTORCH_RE.search(_BINDING_RE.sub(
                " ", _REFERENCE_RE.sub(" ", _COMMENT_RE.sub(" ", question)))) is not None
            or _pastes_pytorch(question),
            compared_with_pytorch=_REFERENCE_RE.search(question) is not None
            and _TORCH_CODE_RE.search(question) is None,
            asked_foreign=any(foreign_words(clause) for clause in asking_clauses(question)),
            # (PyTorch's C++ binding named beside Python PyTorch code is where the learner
            # came from, not what is asked: "I first wrote it with libtorch, where ...")
            asked_framework=any(
                "frameworks" in foreign_words(clause).values()
                and not _PYTORCH_RE.search(_BINDING_RE.sub(" ", _REFERENCE_RE.sub(" ", clause)))
                for clause in asking_clauses(_BINDING_RE.sub(" ", question)
                                             if _TORCH_CODE_RE.search(question) else question)),
            setup=setup_domain(foreign),
        )


_PYTORCH_RE = re.compile(r"torch", re.IGNORECASE)
_BINDING_RE = re.compile(r"\b(libtorch|torchsharp|torch\s*sharp|ocaml-torch|hasktorch|torch\.rb)\b",
                         re.IGNORECASE)
"""PyTorch's bindings for other languages: their name holds "torch", their API is not the
Python one the course teaches, so naming them is not naming PyTorch."""
_COMMENT_RE = re.compile(r"(?m)(?:^|(?<=\s))#(?!\d)[^\n]*")
"""A Python comment (not an issue number, ``#123``)."""
_REFERENCE_RE = re.compile(
    r"\b(like|as|than)\s+(in|with|for|does|do)?\s*py\s?torch('s)?\b|\bsimilar\s+to\s+"
    r"(that\s+(in|of)\s+)?py\s?torch\b|\bpy\s?torch-(like|style)\b|"
    r"(像|类似于?|如同)\s*py\s?torch|"
    # a torch API as the thing sought elsewhere ("a function like torch.autograd.grad() in
    # OneFlow", "类似 torch.no_grad 的接口"): the API is the reference, not the subject
    r"\b(like|as|than|similar\s+to|equivalent\s+(of|to)|counterpart\s+(of|to)|same\s+as)\s+"
    r"`?torch(\.\w+)+(\(\))?`?|(像|类似于?|如同|对应)\s*`?torch(\.\w+)+(\(\))?`?",
    re.IGNORECASE,
)
"""PyTorch named as the model another tool is compared with ("define-by-run, like in PyTorch",
"像 PyTorch 的 no_grad 那样"): the question is that tool's; it does not name PyTorch as its own."""
_TORCH_STYLE_RE = re.compile(
    r"\.zero_grad\(|\brequires_grad(_\(|\s*=)|\.grad_fn\b|\.retain_grad\(|"
    r"\bnn\.Module\b|\.named_parameters\(")
"""Calls and attributes only PyTorch's API has, that code without any ``torch`` word still
shows (a method pasted from a training script). Not ``.backward()``, ``.grad`` or
``nn.Linear``: MXNet, Paddle, OneFlow and MegEngine code has them too."""
_IMPORT_RE = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.MULTILINE)


def _pastes_pytorch(question: str) -> bool:
    """Whether the code ``question`` pastes is PyTorch's by its API and imports nothing of
    another framework: another framework named in its prose is then a comparison."""
    from tutor.chat.snippets import pasted_blocks

    pasted = "\n".join(pasted_blocks(question, inline=False))
    imported = {m.split(".")[0] for m in _IMPORT_RE.findall(pasted)}
    return _TORCH_STYLE_RE.search(pasted) is not None and not foreign_words(pasted) and (
        not imported or "torch" in imported)


_TORCH_CODE_RE = re.compile(r"\btorch\.\w|\bimport\s+torch\b|\bfrom\s+torch\b")
"""PyTorch code in the question: the learner works in PyTorch, whatever else they compare."""
_CLAUSE_END_RE = re.compile(r"(?<=[,;:!?，；：！？。])|(?<=\.)\s")
_ASKING_RE = re.compile(
    r"\?|？|\b(which|what|how|why|where|when)\b|吗|怎么|什么|哪|为什么|为啥|如何|是否|"
    # an auxiliary asks where it opens the clause ("Is there a way...", "Should I..."); inside
    # one it states ("in TensorFlow the pass is always computed...")
    r"^\W*((so|and|but|also|then|now|ok|okay)\W+)?"
    r"(should|can|could|is|are|do|does|did|would|will|has|have)\b",
    re.IGNORECASE,
)


def asking_clauses(question: str) -> list[str]:
    """The clauses of ``question`` that ask something (an interrogative or a question mark)."""
    return [c for c in _CLAUSE_END_RE.split(question) if c.strip() and _ASKING_RE.search(c)]


def _without_cjk(text: str) -> str:
    return _CJK_RUN_RE.sub(" ", text)
