"""How answers read (QA2 #5, #7, #21, #22): the concept asked about, no exercise prompt pasted
into an explanation, one reference a line, the lessons listed = the lessons named, Chinese
punctuation and spacing in zh answers, examples commented in the answer's language, sources
by title."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor.chat import Tutor
from tutor.chat.markdown import summary, tidy_chinese
from tutor.chat.passages import load_glossary
from tutor.course import load_course
from tutor.course.models import ReadingStep

HERE = Path(__file__).parent

_CJK_GAP = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef] [\u4e00-\u9fff\u3000-\u303f]")
_LESSON_REF = re.compile(r"” ?[(（]([a-z][a-z0-9-]+)(?:/[a-z0-9-]+)?[)）]")


@pytest.fixture(scope="module")
def bundled() -> Tutor:
    return Tutor(load_course())


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("什么是叶子张量", "graph/leaf-or-not"),
        ("what is a leaf tensor", "graph/leaf-or-not"),
        ("how do I stop gradient tracking for evaluation", "glossary:no-grad"),
        ("评估模型的时候怎么关掉梯度", "no-grad/intro"),
    ],
)
def test_the_concept_asked_about_answers(bundled: Tutor, question: str, title: str) -> None:
    assert bundled.ask(question).sources[0] == title


def _prompts() -> list[str]:
    course = load_course()
    return [
        line.strip()
        for lesson in course.lessons
        for step in lesson.steps
        if not isinstance(step, ReadingStep) and getattr(step, "prompt", None) is not None
        for text in (step.prompt.en, step.prompt.zh)  # type: ignore[union-attr]
        for line in text.splitlines()
        if len(line.strip()) > 25
    ]


@pytest.mark.parametrize(
    "question",
    [
        "how do I stop gradient tracking for evaluation",
        "what does detach do",
        "retain_graph 有什么用",
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
    ],
)
def test_no_exercise_prompt_inside_an_explanation(bundled: Tutor, question: str) -> None:
    answer = bundled.ask(question)
    best = answer.sources[0]
    pasted = [line for line in _prompts() if line in answer.text]
    # the best passage may itself be a step (then its prompt is the answer); nothing else may
    assert not pasted or ("/" in best and not best.startswith(("glossary:", "catalog:"))), pasted


def test_one_reference_a_line_and_lessons_are_those_named(bundled: Tutor) -> None:
    answer = bundled.ask("why is my x.grad None?")
    for line in answer.text.splitlines():
        assert line.count("Read:") <= 1, line
    named = list(dict.fromkeys(_LESSON_REF.findall(answer.text)))
    assert answer.lessons == named and len(named) >= 4


@pytest.mark.parametrize(
    "question", ["what is grad_fn", "what does detach do", "how does backward work"]
)
def test_lessons_are_the_lessons_named(bundled: Tutor, question: str) -> None:
    answer = bundled.ask(question)
    named = list(dict.fromkeys(_LESSON_REF.findall(answer.text)))
    assert answer.lessons == named


@pytest.mark.parametrize(
    "question",
    [
        "retain_graph 有什么用",
        "y.data.norm() 是什么意思",
        "为什么叶子张量的 grad_fn 是 None",
        "什么是叶子张量",
    ],
)
def test_chinese_answers_read_as_chinese(bundled: Tutor, question: str) -> None:
    text = bundled.ask(question, lang="zh").text
    prose = re.sub(r"```.*?```|`[^`\n]*`", "X", text, flags=re.DOTALL)
    assert not _CJK_GAP.search(prose), _CJK_GAP.search(prose)
    # Chinese brackets around lesson ids, as in the 参阅 line
    assert not re.search(r"” \([a-z-]+\)", text)
    # a stray quiz question is not part of an answer
    assert "的作用是什么？" not in text


def test_no_dangling_lead_in_before_an_example(bundled: Tutor) -> None:
    text = bundled.ask("what is grad_fn").text
    before = text.split("Example:")[0].rstrip()
    assert not before.endswith(":")


def test_a_summary_that_leaves_out_the_code_leaves_out_its_lead_in() -> None:
    # the sentence that introduced the code goes with it: its colon turned into a full stop
    # left a fragment ("清零的办法有。", "Stored in the result's attribute.")
    text = "Stored in the result's attribute:\n\n```python\n" + "x = 1\n" * 12 + "```\n\nMore."
    assert summary(text, 200) == "More."
    text = "It adds up. The ways to clear it are:\n\n```python\n" + "x = 1\n" * 12 + "```"
    assert summary(text, 200) == "It adds up."
    zh = "代价是每一步都要先清零。\n清零的办法有：\n\n```python\n" + "x = 1\n" * 12 + "```"
    assert summary(zh, 200) == "代价是每一步都要先清零。"
    # a paragraph wrapped over lines: a line break is not a sentence end, so the sentence
    # that introduced the code goes whole ("... today `Function` is the base" was left)
    wrapped = ("Each op stores a node in `.grad_fn`. Every such node is a `Node`\n"
               "(the text calls them `Function`s; today `Function` is the base\n"
               "class you subclass, lesson 18):\n\n```python\n" + "x = 1\n" * 12 + "```")
    assert summary(wrapped, 300) == "Each op stores a node in `.grad_fn`."
    zh = ("每次运算都会创建节点，并存进 `.grad_fn` 里。这些节点都是 `Node`（原文称它们为\n"
          "`Function`；今天它是基类）：\n\n```python\n" + "x = 1\n" * 12 + "```")
    assert summary(zh, 300) == "每次运算都会创建节点，并存进 `.grad_fn` 里。"
    # a list item still ends what came before it
    listed = "Clear them:\n- with zero_grad\n- with None, like this:\n\n```python\n" + \
        "x = 1\n" * 12 + "```"
    assert summary(listed, 300) == "Clear them:\n- with zero_grad"
    # all of it lead-in: its colon ends it, rather than nothing at all
    assert summary("见下：\n\n```python\n" + "x = 1\n" * 12 + "```", 100) == "见下。"


def test_tidy_chinese_keeps_code_and_latin_spacing() -> None:
    assert tidy_chinese("算的是 同一个值，`a  b` 和 x.grad 是 None") == (
        "算的是同一个值，`a  b` 和 x.grad 是 None"
    )


def test_glossary_examples_have_chinese_comments_in_chinese() -> None:
    # an example comment in English words needs its zh version (data, glossary.yaml)
    for entry in load_glossary().entries:
        if entry.code is None:
            continue
        names = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"#.*", "", entry.code.en)))
        for line in entry.code.zh.splitlines():
            comment = line.partition("#")[2]
            # words of prose, not code (`z.sum()` in a comment is code)
            words = set(re.findall(r"(?<![.\w])[a-z]{3,}\b(?![.(])", comment)) - names

            assert not words, (entry.id, line)


def test_a_zh_answer_shows_the_zh_example(bundled: Tutor) -> None:
    # a glossary entry's example has its Chinese comments ...
    text = bundled.ask("retain_graph 是什么", lang="zh").text
    assert "the graph was kept" not in text
    # ... and an answer card's example drops its English prose comments in Chinese
    zh = bundled.ask("Can't call numpy() on Tensor that requires grad 报错怎么改", lang="zh").text
    en = bundled.ask("Can't call numpy() on Tensor that requires grad, how to fix", lang="en").text
    assert "```python" in zh and "```python" in en
    assert not re.search(r"#\s*[A-Za-z]{3,} [a-z]{3,}", zh)


def test_sources_read_as_titles(bundled: Tutor) -> None:
    answer = bundled.ask("为什么叶子张量的 grad_fn 是 None", lang="zh")
    labels = answer.sources_for("zh")
    assert labels and len(labels) == len(set(labels))
    for label in labels:
        assert not re.search(r"(glossary|catalog|diagnosis|run):", label), label
    # each cause titled by the step its 参阅 line sends the learner to
    assert labels[0] == "是不是叶子？（课程“计算图：Function、grad_fn 与叶子张量”）"
    assert any("课程“detach()：停止追踪”" in label for label in labels)
    assert answer.sources_for("en")[0] == (
        "Leaf or not? (lesson “The graph: Function, grad_fn and leaves”)"
    )
    card = bundled.ask("what is a leaf tensor").sources_for("en")
    assert card[0] == "Leaf or not? (lesson “The graph: Function, grad_fn and leaves”)"


def test_step_sources_are_titled(bundled: Tutor) -> None:
    from tutor.chat import ChatContext

    context = ChatContext(lesson_id="non-scalar", step_id="fix-scalar", attempts=0)
    hint = bundled.ask("just give me the code", lang="en", context=context)
    assert hint.sources_for("en") == [
        "Fix the source text's error (lesson “Backward from a non-scalar output”)"
    ]


def _prose(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


def test_answers_to_real_questions_read_cleanly(bundled: Tutor) -> None:
    """Issue 20's clean text, on the learner questions (both splits): no sentence said twice,
    one language, every paragraph whole (ends as a sentence, or is a list, heading or code)."""
    from chat_evaluation import in_language, load_learner

    items = [*load_learner(HERE / "learner/dev.yaml"), *load_learner(HERE / "learner/test.yaml")]
    for item in items:
        text = bundled.ask(item.q, lang=item.lang).text
        sentences = [
            s.strip() for s in re.split(r"(?<=[.!?。！？])\s*", _prose(text)) if len(s.strip()) > 25
        ]
        assert len(sentences) == len(set(sentences)), (item.id, text)
        assert in_language(text, item.lang), (item.id, text)
        for paragraph in (p.strip() for p in _prose(text).split("\n\n") if p.strip()):
            whole = re.search(r"[.!?。！？:：)）”\"`*]$", paragraph) or paragraph.startswith(
                ("-", "1.", "**", "#")
            )
            assert whole, (item.id, paragraph)
