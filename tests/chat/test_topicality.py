"""The on-topic judgement: a question must be ABOUT autograd, not only name something near it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.chat import ChatContext, Tutor
from tutor.chat.topicality import TopicEvidence, foreign_words
from tutor.course import load_course
from tutor.yaml_read import load as yaml_load

GATE = yaml_load((Path(__file__).parent / "topic_gate.yaml").read_text("utf-8"))


@pytest.fixture(scope="module")
def bundled() -> Tutor:
    return Tutor(load_course())


@pytest.mark.parametrize("question", GATE["off"])
def test_questions_about_another_domain_are_declined(bundled: Tutor, question: str) -> None:
    answer = bundled.ask(question)
    assert answer.kind == "off_topic" and answer.refused, bundled.retriever.explain(question)


@pytest.mark.parametrize("question", GATE["on"])
def test_autograd_questions_that_mention_another_domain_are_answered(
    bundled: Tutor, question: str
) -> None:
    answer = bundled.ask(question)
    assert answer.kind == "answer" and answer.lessons, bundled.retriever.explain(question)


def test_the_phrasings_cover_both_languages_and_both_verdicts() -> None:
    for side in ("off", "on"):
        zh = sum(any("\u4e00" <= ch <= "\u9fff" for ch in q) for q in GATE[side])
        assert len(GATE[side]) >= 20 and zh >= len(GATE[side]) // 3


def test_foreign_words_are_distinct_and_name_their_domain() -> None:
    found = foreign_words("which gpu should I buy for gaming, budget 500 dollars? I'll buy one")
    assert found == {
        "buy": "shopping",
        "gaming": "everyday",
        "budget": "shopping",
        "dollars": "shopping",
    }
    assert foreign_words("帮我写一份周报") == {"写一份": "writing", "周报": "writing"}
    # autograd's own words that look like another domain's are not foreign
    assert foreign_words("the graph node keeps its history; 显存一直涨；吃显存；3 元素") == {}


def test_one_field_word_does_not_outweigh_a_foreign_topic(bundled: Tutor) -> None:
    gaming = bundled.retriever.judge("best gpu for gaming under 500")
    assert gaming.reason == "foreign" and gaming.anchors == 0.5  # a broad word: half
    report = bundled.retriever.judge("帮我写一份周报，这周学了pytorch")
    assert report.reason == "foreign"
    # the same foreign word, outweighed by what the question is about
    served = bundled.retriever.judge("my flask app calls loss.backward() and x.grad is None")
    assert served.reason == "anchor" and served.foreign


def test_synonyms_count_once_and_course_code_names_anchor(bundled: Tutor) -> None:
    # 导数 is indexed as 梯度: one anchor, so two exam words outweigh it
    exam = bundled.retriever.judge("高考数学导数大题怎么做")
    assert exam.anchors == 1.0 and exam.reason == "foreign"
    fc1 = bundled.retriever.judge("fc1 那个 16*5*5 是怎么算出来的")  # the course's Net
    assert fc1.topic_anchor
    assert not bundled.retriever.judge("rtx4090 和 rtx4080 哪个好").topic_anchor


def test_without_an_anchor_both_the_words_and_the_retrieval_must_carry_it() -> None:
    plain = dict(anchors=0.0, topic_anchor=False, foreign={}, coverage=0.0)
    assert TopicEvidence(**plain, vocabulary=0.9, top_score=12.0, margin=0.5).on_topic
    assert not TopicEvidence(**plain, vocabulary=0.9, top_score=12.0, margin=0.05).on_topic
    assert not TopicEvidence(**plain, vocabulary=0.4, top_score=12.0, margin=0.5).on_topic
    broad = dict(plain, anchors=0.5)
    assert TopicEvidence(**broad, vocabulary=0.9, top_score=1.0, margin=0.0).on_topic
    assert TopicEvidence(**broad, vocabulary=0.3, top_score=12.0, margin=0.5).on_topic
    assert not TopicEvidence(**broad, vocabulary=0.3, top_score=3.0, margin=0.5).on_topic


def test_a_foreign_question_is_declined_even_with_a_run_or_a_step(bundled: Tutor) -> None:
    context = ChatContext(lesson_id="accumulation", step_id="forgot-zero", attempts=1)
    answer = bundled.ask("my flask app returns 500 when someone logs in, fix it", context=context)
    assert answer.kind == "off_topic"
    # pointing at the step on which the learner is stays on topic in any words
    assert bundled.ask("how do I start on this exercise?", context=context).kind != "off_topic"


@pytest.mark.parametrize(
    "question",
    [
        "帮我写一首关于梯度下降的诗，七言的",
        "write me a short poem about backpropagation and loss.backward()",
        "线代作业 求矩阵 [[1,2],[3,4]] 的特征值和特征向量 要写过程",
    ],
)
def test_a_writing_or_homework_task_is_declined_even_about_autograd(
    bundled: Tutor, question: str
) -> None:
    answer = bundled.ask(question)
    assert answer.kind == "off_topic", bundled.retriever.explain(question)


@pytest.mark.parametrize(
    "question",
    [
        "我在写周报，顺便问一下 detach 和 .data 有什么区别",
        "why does my essay-style notes example of loss.backward() leave x.grad None?",
    ],
)
def test_a_question_that_mentions_a_writing_task_still_asks_to_understand(
    bundled: Tutor, question: str
) -> None:
    evidence = bundled.retriever.judge(question)
    assert not evidence.task and bundled.ask(question).kind == "answer"


@pytest.mark.parametrize(
    "question",
    [
        "NameError: name 'requests' is not defined, my crawler stopped at page 2",
        "KeyError: 'name' 读字典的时候报的，怎么回事",
        'IndexError: string index out of range\n  File "parse_log.py", line 9\nwhat now',
        # a message plain Python raises that the catalog also knows, in another program
        "AttributeError: 'NoneType' object has no attribute 'text'\n  File \"crawl.py\", line 4,"
        " in get\n    name = page.find('span').text",
    ],
)
def test_a_plain_python_error_without_autograd_around_it_is_declined(
    bundled: Tutor, question: str
) -> None:
    ev = bundled.retriever.judge(question)
    assert ev.plain_error and ev.reason == "plain-error"
    assert bundled.ask(question).kind == "off_topic"


@pytest.mark.parametrize(
    "question",
    [
        "KeyError: 'fc3.weight' when i load the state dict into my nn.Module",
        "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu",
        "w.grad * lr 报 TypeError: unsupported operand type(s) for *: 'NoneType' and 'float'",
        # the catalog's plain-Python message alone, in the course's words
        "TypeError: unsupported operand type(s) for -: 'NoneType' and 'float'",
    ],
)
def test_an_error_about_tensors_or_the_courses_own_is_answered(
    bundled: Tutor, question: str
) -> None:
    assert bundled.ask(question).kind == "answer", bundled.retriever.explain(question)


def test_a_plain_error_on_an_exercise_is_the_learners_course_code(bundled: Tutor) -> None:
    question = "KeyError: 'w' what did i do wrong here"
    assert bundled.retriever.judge(question).reason == "plain-error"
    assert not bundled.retriever.judge(question, on_step=True).plain_error


def test_a_machine_api_does_not_make_a_setup_question_about_autograd(bundled: Tutor) -> None:
    # torch.cuda.is_available() counted as an autograd anchor, so a driver question with a
    # "solution" in it went to the exercises' hints ("open an exercise first")
    driver = bundled.ask(
        "After I updated pytorch, torch.cuda.is_available() returns False and my NVIDIA driver "
        "is too old. Should I update CUDA and the driver together, or is there any other "
        "solution?"
    )
    assert driver.kind == "off_topic" and "setting up your machine" in driver.text
    assert bundled.ask("import torch 正常，torch.cuda.is_available() 返回 False 怎么办？").kind == (
        "off_topic"
    )
    # the same API beside an autograd word is still the course's
    judged = bundled.retriever.judge("why is x.grad None after x.cuda()? torch.cuda.is_available()")
    assert judged.on_topic


def test_no_torch_api_name_reads_as_another_domains_word() -> None:
    """A bare 'git' in the Chinese setup pattern once matched inside 'logits' and
    'BCEWithLogitsLoss': 'Should I use BCELoss or BCEWithLogitsLoss?' was declined as a
    question about setting up the machine. Every name of torch's API that the chat knows
    is checked; the few that are also plain words of another domain are listed."""
    from tutor.chat.domains import foreign_words

    path = Path(__file__).parents[2] / "tutor" / "chat" / "api_names.txt"
    names = [n.strip() for n in path.read_text("utf-8").splitlines()
             if n.strip() and not n.startswith("#")]
    plain_words = {"div", "budget", "eigenvectors"}  # also a web tag, shopping, maths
    read_as_foreign = {n: f for n in names if (f := foreign_words(n)) and n not in plain_words}
    assert len(names) > 1000 and read_as_foreign == {}


@pytest.mark.parametrize(("question", "card"), [
    ("GPU memory keeps growing during training until it crashes",
     "cuda-out-of-memory-training"),
    # a weak match of plain words needs no agreement of the lessons' prose, which has none
    # of them (the retrieval picked the scheduler passage for 'epoch')
    ("training gets slower every epoch", "memory-grows-graph-kept-alive"),
])
def test_a_symptom_in_plain_words_that_a_card_asks_reaches_that_card(
    bundled: Tutor, question: str, card: str
) -> None:
    """No API word, no error message: the question is placed in PyTorch because it asks
    nearly what a card's question form asks (it was answered 'I'm not sure I understood')."""
    from tutor.chat.cards import bundled_book

    found = bundled_book().match(question)
    assert found is not None and found.card.id == card
    answer = bundled.ask(question)
    assert not answer.refused and "not sure" not in answer.text and "不太确定" not in answer.text
    assert answer.text[:60] in found.card.answer.en, answer.text  # the card answers it


@pytest.mark.parametrize("question", [
    "my memory keeps growing, should I buy more RAM",
    "how do I bake a cake",
])
def test_plain_words_near_no_form_stay_off_topic(bundled: Tutor, question: str) -> None:
    assert bundled.ask(question).kind == "off_topic"
