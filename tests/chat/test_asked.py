"""The asked point (tutor/chat/asked.py) and the answers composed for it: the first sentence
answers what the asking sentences ask — both sides of the comparison they name, a yes or no
only from a card about what they name, the nearest card offered as such when it speaks of
nothing they ask, the run's yes or no to "does it raise?", the rest of a "what does this
print, and why?" after the run's facts."""

from __future__ import annotations

import re

import pytest

from tutor.chat import Tutor
from tutor.chat.asked import api_names, asked_point, asking, asks_if_it_errors, other_asks
from tutor.chat.bilingual import Both
from tutor.chat.cards import Card, CardBook, CardSet, Names, Side, compose, load_cards
from tutor.chat.solution_requests import detect
from tutor.course import load_course
from tutor.sandbox import Sandbox

NO_NAMES = Names()


# ---------------------------------------------------------------- the asked point


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("Can someone explain what is the difference between step() and backward() and what "
         "they do? Also when should we use zero_grad()?", ({"step"}, {"backward"})),
        ("what's the difference between (loss1+loss2).backward() and "
         "loss1.backward(retain_graph=True); loss2.backward()?",
         ({"backward"}, {"backward", "retain_graph"})),
        ("nn.Sequential 和 nn.ModuleList 有什么区别？为什么不能直接用 list？",
         ({"sequential"}, {"modulelist"})),
        ("Should I use model.eval() vs torch.no_grad() for validation?", ({"eval"}, {"no_grad"})),
        # the clause that says 区别 names no API: the two names the question asks about are
        ("tensor.detach() 和 tensor.data 都能得到新张量，它们在用法上有什么区别？",
         ({"detach"}, {"data"})),
    ],
)
def test_a_comparison_names_its_two_sides(question: str, sides: tuple[set[str], set[str]]) -> None:
    point = asked_point(question)
    assert point.kind == "compare" and point.sides is not None, point
    assert tuple(set(side.names) for side in point.sides) == sides


def test_the_asked_names_are_those_of_the_sentences_that_ask() -> None:
    question = ("I moved my tensors with x.cuda() and stored them in a list. "
                "Does optimizer.zero_grad() free the memory of old graphs?")
    point = asked_point(question)
    assert point.names == {"zero_grad"}
    assert {"cuda", "zero_grad"} <= point.named
    # Python's and torch's plain names name no topic; the learner's own do
    assert api_names("print(torch.tensor([1.]).sum())") == frozenset()
    assert "l2_y" in api_names("why is self.L2_Y.grad None?")


def test_a_bare_why_asks_about_the_sentence_before_it() -> None:
    point = asked_point("I call .retain_grad() on the output in forward() and its .grad is "
                        "still None. Why?")
    assert "retain_grad" in point.names and point.asking.endswith("Why?")


def test_what_else_a_value_question_asks_is_read_beside_its_print() -> None:
    asks, around = other_asks(
        "I read that .data is unsafe. What does this print with .data, and is the result "
        "right?\nimport torch\nprint(torch.ones(1).data)"
    )
    assert asks == "is the result right?"
    assert around.startswith("I read that .data is unsafe.") and "print" not in around
    assert other_asks("What does this print?\nimport torch\nprint(torch.ones(2))") == ("", "")
    assert asks_if_it_errors("真的会报错吗？") and asks_if_it_errors("Will this throw an error?")
    assert not asks_if_it_errors("Why is x.grad None?")


# ---------------------------------------------------------------- cards ranked for it


def _card(card_id: str, forms: tuple[str, ...], answer: str, **fields: object) -> Card:
    return Card(
        id=card_id,
        read="accumulation/intro",
        answer=Both(answer, answer + "（中文）"),
        forms=Both(forms, ()),
        **fields,  # type: ignore[arg-type]
    )


ZERO_SIDES = _card(
    "zero-sides",
    ("when should we use zero_grad", "optimizer zero_grad or model zero_grad"),
    "ZERO-SIDES both clear gradients.",
    sides=(Side("optimizer.zero_grad()", "clears its parameters.", "清空它的参数。"),
           Side("model.zero_grad()", "clears the module's.", "清空模块的。")),
)
STEP_SIDES = _card(
    "step-sides",
    ("what does optimizer step do",),
    "STEP-SIDES backward computes, step updates.",
    sides=(Side("loss.backward()", "computes the gradients.", "计算梯度。"),
           Side("optimizer.step()", "updates the parameters.", "更新参数。")),
)


def test_a_comparison_is_answered_by_the_card_whose_sides_it_names() -> None:
    book = CardBook(CardSet((ZERO_SIDES, STEP_SIDES)))
    question = ("What is the difference between step() and backward() and what do they do? "
                "Also when should we use zero_grad()?")
    found = book.match(question)
    assert found is not None and found.card.id == "step-sides"
    text = compose(found, "en", NO_NAMES)
    first, second = text.splitlines()[:2]
    assert first.startswith("- loss.backward()") and second.startswith("- optimizer.step()")


def test_one_thing_or_another_is_answered_by_the_card_that_tells_them_apart() -> None:
    point = asked_point("What does model.eval() do? Does it turn off gradient computation, "
                        "or do I still need torch.no_grad()?")
    assert point.kind == "can" and point.sides is not None
    assert [set(side.names) for side in point.sides] == [{"eval"}, {"no_grad"}]
    assert asked_point("Why does loss.backward() fail after optimizer.step()?").sides is None
    eval_or_no_grad = _card(
        "eval-or-no-grad", ("difference between eval and no_grad",), "EVAL-SIDES both.",
        sides=(Side("model.eval()", "changes dropout.", "改变 dropout。"),
               Side("torch.no_grad()", "stops recording.", "停止记录。")),
    )
    needed = _card("no-grad-needed-2", ("do I still need torch.no_grad when I evaluate",),
                   "NOGRAD2 stops recording.", verdict="yes")
    book = CardBook(CardSet((needed, eval_or_no_grad)))
    found = book.match("Does model.eval() turn off the grad, or do I still need torch.no_grad() "
                       "when I evaluate?")
    assert found is not None and found.card.id == "eval-or-no-grad"
    assert compose(found, "en", NO_NAMES).startswith("- model.eval(): changes dropout.")


NO_GRAD_YES = _card(
    "no-grad-needed",
    ("do I still need torch.no_grad for inference",
     "does model eval stop recording for inference"),
    "NOGRAD stops recording.",
    verdict="yes",
)


def test_a_yes_or_no_comes_only_from_a_card_about_what_is_asked() -> None:
    book = CardBook(CardSet((NO_GRAD_YES,)))
    asked = book.match("Do I still need torch.no_grad for inference?")
    assert asked is not None and compose(asked, "en", NO_NAMES).startswith("Yes.")
    # the card speaks of no_grad, not of eval(): no yes or no about eval() from it
    other = book.match("Does model.eval() stop recording for inference in torch?")
    assert other is not None and other.verdict is None
    assert not compose(other, "en", NO_NAMES).startswith(("Yes", "No"))


def test_a_card_that_speaks_of_nothing_asked_is_offered_as_the_nearest_thing() -> None:
    card = _card("clip", ("does the placement of clipping matter",
                          "where to put gradient clipping in the training loop"),
                 "CLIP clipping goes between backward and step.", verdict="yes")
    book = CardBook(CardSet((card,)))
    found = book.match("I put gradient clipping in my training loop. Why is the memory never "
                       "released?")
    assert found is not None and found.partial and found.verdict is None
    text = compose(found, "en", NO_NAMES)
    assert text.startswith("I have no answer for exactly this; the nearest thing I know:")
    assert "Yes." not in text
    zh = compose(found, "zh", NO_NAMES)
    assert zh.startswith("这个问题我没有确切的答案")
    # a card that speaks of what is asked is an answer, said without that preface
    sure = book.match("Does the placement of gradient clipping matter?")
    assert sure is not None and not sure.partial
    assert compose(sure, "en", NO_NAMES).startswith("Yes. CLIP")


# ---------------------------------------------------------------- the run answers it


@pytest.fixture(scope="module")
def tutor(sandbox: Sandbox) -> Tutor:
    return Tutor(load_course(), runner=sandbox)


DETACHED = """import torch
a = torch.tensor([2.0], requires_grad=True)
b = a.detach()
b += 1
print(a)"""


def test_does_it_raise_is_answered_by_the_run_first(tutor: Tutor) -> None:
    text = tutor.ask(f"My notes say b += 1 raises an in-place error here. Will this throw an "
                     f"error? What does this print?\n{DETACHED}").text
    assert text.startswith("No: it runs without an error."), text
    assert "tensor([3.], requires_grad=True)" in text
    # a card about that error would say it is refused: the run says otherwise
    assert "is refused" not in text and "cannot be changed in place" not in text
    zh = tutor.ask(f"笔记说 b += 1 会报错。真的会报错吗？下面打印什么？\n{DETACHED}").text
    assert zh.startswith("不会：它运行时没有报错。"), zh
    raising = tutor.ask("Will this throw an error? What does it print?\nimport torch\n"
                        "x = torch.ones(2, requires_grad=True)\nx += 1\nprint(x)").text
    assert raising.startswith("Yes, it raises an error."), raising
    assert "line 3" in raising


NON_LEAF = """import torch
x = torch.ones(2, requires_grad=True)
y = x * 2
y.sum().backward()
print(y.grad)"""


def test_what_else_a_value_question_asks_follows_the_runs_facts(tutor: Tutor) -> None:
    text = tutor.ask(f"What does this print, and how do I get the gradient of an "
                     f"intermediate tensor?\n{NON_LEAF}").text
    output, facts = text.index("None"), text.index("`y` is not a leaf")
    more = text.index("retain_grad()", facts + len("`y` is not a leaf"))
    assert output < facts < more, text
    # the learner's names, not a card's stand-ins
    assert not re.search(r"`(t|w|a)\.grad`", text)


# ---------------------------------------------------------------- other routes


def test_naming_the_answer_in_a_later_clause_is_a_request_for_it() -> None:
    question = ("这一题：已经给出 y = x * 3，最后 y.grad（等于 2y）和 x.grad 都要有值。\n"
                "y = x * 3\n请直接给我完整答案。")
    assert detect(question, on_step=True).reason == "answer"


def test_plain_python_code_with_an_error_word_is_not_ours(tutor: Tutor) -> None:
    answer = tutor.ask("If I change one operator:\ni = 0\nwhile i < 10:\n    i =+ 1\n"
                       "    print(i)\nit prints 1s forever. Why isn't a syntax error raised?")
    assert answer.kind == "off_topic", answer.text
    # PyTorch words, even as the one spelling of "导数", keep it ours
    ours = tutor.ask("一阶导数是 2*x，但二阶导数全是 0，为什么？\nout = self.fc1(x)\n"
                     "out = self.relu(out)")
    assert ours.kind != "off_topic"


def test_my_code_questions_start_from_what_the_learners_code_does(tutor: Tutor) -> None:
    question = ("My model does not learn at all and the optimizer has no parameters. What is "
                "wrong?\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()"
                "\n        self.stages = [nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)]\n"
                "    def forward(self, x):\n        for stage in self.stages:\n"
                "            x = stage(x)\n        return x")
    text = tutor.ask(question).text
    stages = "self.stages = [nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)]"
    assert text.startswith(f"In this code `{stages}`"), text
    assert "`self.stages = nn.ModuleList(...)`" in text
    zh = tutor.ask("我的模型完全不学习，你能帮我看看哪里错了吗？\nclass Net(nn.Module):\n"
                   "    def __init__(self):\n        super().__init__()\n"
                   "        self.heads = {'a': nn.Linear(4, 1), 'b': nn.Linear(4, 1)}").text
    heads = "self.heads = {'a': nn.Linear(4, 1), 'b': nn.Linear(4, 1)}"
    assert zh.startswith(f"这段代码里 `{heads}`"), zh
    assert "nn.ModuleDict" in zh and "不行" not in zh



def test_a_program_with_one_backward_gets_no_remark_about_other_backwards(tutor: Tutor) -> None:
    text = tutor.ask("What does this print?\nimport torch\nw = torch.tensor([3.], "
                     "requires_grad=True)\n(w * w).sum().backward()\nprint(w.grad)").text
    assert "tensor([6.])" in text and "`(w * w).sum().backward()` on line 3 put the" in text
    assert "the only `backward()`" not in text


@pytest.mark.parametrize(
    ("answer", "lang", "first"),
    [("不能：这段代码没有计算图。", "zh", "不能："), ("大致是的：两次累加。", "zh", "大致是的"),
     ("Roughly: the two batches add up.", "en", "Roughly:")],
)
def test_an_answer_that_opens_with_its_own_verdict_gets_no_second_one(
    answer: str, lang: str, first: str
) -> None:
    card = _card("own-verdict", ("can I accumulate two batches in torch",), answer,
                 verdict="yes")
    card = Card(**{**card.__dict__, "answer": Both(answer, answer)})
    found = CardBook(CardSet((card,))).match("Can I accumulate two batches in torch?")
    assert found is not None and found.verdict == "yes"
    assert compose(found, lang, NO_NAMES).startswith(first)


def test_a_facet_that_restates_what_was_said_is_left_out() -> None:
    card = _card("renamed", ("why does w lose requires_grad after the update in torch",),
                 "The name w now points to a new tensor, and the leaf is lost.",
                 why=Both("The leaf is lost: the name w now points to a new tensor.",
                          "叶子丢了：名字 w 现在指向新张量。"),
                 pitfall=Both("Use w -= lr * w.grad to keep the leaf.", "用 w -= 保留叶子。"))
    found = CardBook(CardSet((card,))).match("Why does w lose requires_grad after the update "
                                             "in torch?")
    assert found is not None
    text = compose(found, "en", NO_NAMES)
    assert text.startswith("The leaf is lost") and "points to a new tensor, and" not in text
    assert "w -= lr * w.grad" in text  # what is new is kept


def test_a_later_paragraph_that_starts_with_not_is_no_verdict() -> None:
    card = _card("detach-grad", ("is it necessary to detach the grad in torch",),
                 "Not after an ordinary backward: the grad has no graph.", verdict="no",
                 condition=Both("It matters only with create_graph=True.",
                                "只在 create_graph 时。"))
    found = CardBook(CardSet((card,))).match("Is it necessary to detach the grad in torch?")
    assert found is not None
    assert compose(found, "en", NO_NAMES).startswith("No. It matters only with")


def test_a_question_between_two_opposite_choices_gets_no_yes_or_no() -> None:
    assert asked_point("两处能不能都用 detach()，或者都不用？").choice
    assert asked_point("Can I use detach() in both places, or in neither?").choice
    assert not asked_point("Is it fine to comment out model.eval(), or is it unfair?").choice
    card = _card("omit", ("can I use detach in both places in torch",
                          "should I detach in both places or in neither in torch"),
                 "OMIT detaching the fake saves work.", verdict="yes")
    book = CardBook(CardSet((card,)))
    found = book.match("Can I use detach in both places in torch, or in neither?")
    assert found is not None and found.verdict is None
    assert compose(found, "en", NO_NAMES).startswith("OMIT")
    plain = book.match("Can I use detach in both places in torch?")
    assert plain is not None and compose(plain, "en", NO_NAMES).startswith("Yes.")


def test_should_i_use_a_or_b_names_its_sides_among_other_names() -> None:
    """"When computing value_target, should I use torch.no_grad() or detach()?" asks which of
    two: its sides are the two options, not the learner's variables around them, and the card
    that compares them answers it."""
    question = ("When computing value_target and q_hat in SAC, should I use with "
                "torch.no_grad() or detach()?")
    point = asked_point(question)
    assert point.sides is not None
    assert [side.names for side in point.sides] == [frozenset({"no_grad"}),
                                                     frozenset({"detach"})]
    found = CardBook(load_cards()).match(question)
    assert found is not None and found.card.id == "detach-vs-no-grad"
    # a side that runs on into the rest of the sentence ends where a clause begins
    late = asked_point("I wonder whether to use no_grad() or detach() when computing targets.")
    assert late.sides is not None and late.sides[1].text == "detach()"


def test_fenced_output_and_prompt_lines_are_not_what_is_asked() -> None:
    """A fenced block (code or what it printed) and lines typed at an interactive prompt
    are the learner's paste, not the sentences that ask: a `Variable containing:` printed by
    old code does not make the question one about Variable."""
    question = ("chain rule will lead to Nan, sqrt() example\n\nfor example sqrt((x-1)^2) and "
                "|x-1| should have the same grad, but they differ at x close to 1\n```\n"
                ">> x=Variable(torch.Tensor([1]),requires_grad=True)\n>> y.backward()\n"
                "Variable containing:\nnan\n```\nI think when one grad of the chain is Nan, "
                "the final grad will be Nan.")
    said = " ".join(asking(question))
    assert "Variable" not in said and "nan\n" not in said and "sqrt" in said
    found = CardBook(load_cards()).match(question)
    assert found is not None and found.card.id != "variable-deprecated"
