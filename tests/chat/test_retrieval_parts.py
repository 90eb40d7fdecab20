"""Tokens, typo correction, BM25 and markdown blocks: the pieces retrieval is built from."""

from __future__ import annotations

import pytest

from tutor.chat import Tutor
from tutor.chat.bm25 import BM25
from tutor.chat.concepts import load_concepts, name_patterns, named_lessons
from tutor.chat.markdown import blocks, plain, sections, summary
from tutor.chat.passages import glossary_passages, load_glossary
from tutor.chat.retrieval import Retriever
from tutor.chat.spelling import Speller, edit_distance
from tutor.chat.tokens import cjk_bigrams, tokenize
from tutor.course import load_course


def test_chinese_is_indexed_as_bigrams_and_filler_dropped() -> None:
    assert cjk_bigrams("计算图") == ["计算", "算图"]
    tokens = tokenize("为什么梯度会累加")
    assert "梯度" in tokens and "累加" in tokens
    assert "为什" not in tokens and "什么" not in tokens


def test_identifiers_yield_attribute_and_parts() -> None:
    tokens = tokenize("why is x.grad None after torch.no_grad()?")
    assert ".grad" in tokens and "grad" in tokens
    assert "torch.no_grad" in tokens and "no_grad" in tokens
    assert "x" not in tokens  # a variable name says nothing about the topic


def test_words_typed_apart_join_into_api_names() -> None:
    tokens = tokenize("what does retain graph do", joinable={"retain_graph"})
    assert "retain_graph" in tokens
    assert "retain_graph" not in tokenize("what does retain graph do")


def test_english_words_are_stemmed_and_stopwords_dropped() -> None:
    assert tokenize("the gradients") == tokenize("gradient")


def test_edit_distance_counts_transpositions_as_one() -> None:
    assert edit_distance("requries", "requires") == 1
    assert edit_distance("backwrad", "backward") == 1
    assert edit_distance("abc", "xyz") == 3


def test_speller_moves_only_misspellings_towards_targets() -> None:
    speller = Speller(["requires_grad", "backward", "retain_graph"], known=["weather"])
    assert speller.correct("requries_grad") == "requires_grad"
    assert speller.correct("retian_graph") == "retain_graph"
    assert speller.correct("weather") == "weather"  # a real word stays
    assert speller.correct("cook") == "cook"  # too short to trust
    assert speller.correct("banana") == "banana"  # nothing close


def test_bm25_prefers_rare_shared_terms() -> None:
    index = BM25([["grad", "leaf"], ["grad", "device"], ["grad", "grad", "norm"]])
    scores = index.scores(["leaf", "grad"])
    assert max(scores, key=scores.__getitem__) == 0
    assert index.scores(["absent"]) == {}


def test_retriever_corrects_typos_in_questions() -> None:
    glossary = load_glossary()
    retriever = Retriever.build(glossary_passages(glossary), glossary)
    assert "requires_grad" in retriever.correct("what is requries_grad")
    hits = retriever.search("what is requries_grad")
    assert hits[0].passage.lesson_id == "requires-grad"
    assert retriever.on_topic("梯度是什么")
    assert not retriever.on_topic("how do I bake bread")


def test_markdown_blocks_keep_code_fences_whole() -> None:
    text = (
        "Intro line.\n\n```python\nx = 1\n\n# comment, not a heading\ny = 2\n```\n\n## Next\nMore."
    )
    parts = blocks(text)
    assert parts[1].startswith("```python") and "y = 2" in parts[1]
    assert parts[2] == "## Next"
    assert summary(text, 500).count("```") == 2
    long_text = "\n\n".join(f"## H{i}\n" + "word " * 60 for i in range(5))
    pieces = sections(long_text, 400)
    assert len(pieces) > 1 and all(p.startswith("## H") for p in pieces)


def test_plain_text_drops_emphasis_but_not_a_code_spans_underscores() -> None:
    """`tutor ask` into a pipe wrote "build layers in init" for ``__init__`` (learner5
    zh-6a9336b1): emphasis marks go, code keeps every character."""
    text = "**Fix:** build layers in `__init__`, call `net.__call__` via __strong__ words."
    assert plain(text) == "Fix: build layers in __init__, call net.__call__ via strong words."


def test_a_pasted_error_is_routed_by_the_catalog_message_and_the_words_around_it() -> None:
    from tutor.chat import Tutor
    from tutor.course import load_course

    retriever = Tutor(load_course(), cache_dir=None).retriever
    message = "Trying to backward through the graph a second time"
    loop = retriever.retrieve(f"{message} -- my training loop: the first iteration works")
    mm = retriever.retrieve(
        f"{message}, in the torch.mm example when I call backward again for the y gradient"
    )
    # both lessons quote the message; what the learner says around it picks the lesson
    assert set(loop.pasted_scores) == set(mm.pasted_scores) == {"errors", "matrix-mm"}
    assert loop.lessons[0] == "errors" and mm.lessons[0] == "matrix-mm"
    assert "error" in loop.kinds  # quoting a message is an error question, however worded
    # a message cut short with "..." is still recognised by its literal part
    cut = retriever.retrieve(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation ... what now"
    )
    assert cut.pasted_scores and cut.lessons[0] == "errors"
    assert not retriever.retrieve("what does retain_graph do").pasted_scores


@pytest.mark.parametrize(
    ("question", "lesson"),
    [
        ("in the no_grad lesson my eval loop still says RuntimeError about devices", "no-grad"),
        ("the review exercise with the line fit: my loss goes up, not down", "review"),
        ("矩阵那一节里 x.grad 的形状为啥是 (2,)", "matrix-mm"),
        ("综合题里那个 norm 的梯度没看懂", "review"),
    ],
)
def test_a_lesson_named_as_the_one_the_learner_is_on_leads(question: str, lesson: str) -> None:
    tutor = Tutor(load_course())
    assert tutor.retriever.retrieve(question).lessons[0] == lesson
    assert named_lessons(question, tutor.retriever.lesson_names) == [lesson]


def test_a_lesson_word_without_a_lesson_noun_names_nothing() -> None:
    patterns = name_patterns(load_concepts())
    assert named_lessons("does detach copy the data", patterns) == []
    assert named_lessons("the graph is freed after backward", patterns) == []
    assert named_lessons("我的网络输出不对", patterns) == []
