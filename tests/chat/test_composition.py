"""Answers composed from a card's facets for the kind of question asked; a question of several
parts answered part by part; what the learner's code already does said first (code_facts.py);
the cause in pasted code and in the TUI's last run from the run's own facts."""

from __future__ import annotations

import pytest

from tutor.chat import ChatContext, Tutor
from tutor.chat.bilingual import Both
from tutor.chat.cards import Card, CardBook, CardSet, CodeFactUse, Names, compose, question_parts
from tutor.chat.code_facts import READERS, find, worded
from tutor.chat.quick import card_text
from tutor.chat.snippets import learner_code
from tutor.course import load_course
from tutor.sandbox import Sandbox

NO_NAMES = Names()


def _card(**fields: object) -> Card:
    base: dict[str, object] = {
        "id": "clip",
        "read": "debugging-gradients/clip-norm",
        "answer": Both("ANSWER rescales the gradients.", "ANSWER 缩放梯度。"),
        "forms": Both(
            ("how do I clip the gradients before the optimizer step",
             "does clipping the gradients change the optimizer step"),
            ("怎么在优化器 step 之前裁剪梯度",),
        ),
        "verdict": "yes",
        "condition": Both("CONDITION between backward and step.", "CONDITION 在之间。"),
        "why": Both("WHY step reads the gradients.", "WHY step 读取梯度。"),
        "steps": (Both("STEP backward.", "STEP 反向。"), Both("STEP clip.", "STEP 裁剪。")),
        "pitfall": Both("PITFALL after the step.", "PITFALL 在之后。"),
    }
    base.update(fields)
    return Card(**base)  # type: ignore[arg-type]


def _answer(book: CardBook, question: str, lang: str = "en", code: str = "") -> str:
    found = book.match(question)
    assert found is not None, question
    return compose(found, lang, NO_NAMES, code=code)


# ---------------------------------------------------------------- facets by kind


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Why should I clip the gradients before the optimizer step?", "WHY"),
        ("How do I clip the gradients before the optimizer step?", "1. STEP backward."),
        ("Does clipping the gradients change the optimizer step?", "Yes. CONDITION"),
        ("What does clipping the gradients before the optimizer step do?", "ANSWER"),
    ],
)
def test_the_facet_the_kind_asks_for_leads(question: str, first: str) -> None:
    text = _answer(CardBook(CardSet((_card(),))), question)
    assert text.startswith(first), text
    for facet in ("ANSWER", "WHY", "STEP clip", "PITFALL"):  # then the rest, once each
        assert text.count(facet) == 1, (facet, text)


def test_a_chinese_yes_no_question_gets_the_verdict_and_condition_first() -> None:
    question = "怎么在优化器 step 之前裁剪梯度，这样可以吗？"
    text = _answer(CardBook(CardSet((_card(),))), question, "zh")
    assert text.startswith("是的。CONDITION"), text


def test_a_card_without_facets_is_composed_as_before() -> None:
    plain = _card(condition=None, why=None, steps=(), pitfall=None)
    text = _answer(CardBook(CardSet((plain,))), "Does clipping the gradients change the step?")
    assert text == "Yes. ANSWER rescales the gradients."


# ---------------------------------------------------------------- several parts


def test_a_question_is_cut_after_each_sentence_that_asks() -> None:
    parts = question_parts("We divide the grads. Why is that? We do not divide the loss. Is it "
                           "needed? Thanks")
    assert parts == ["We divide the grads. Why is that?",
                     "We do not divide the loss. Is it needed? Thanks"]
    parts = question_parts("为什么要清零？另外需要裁剪吗？")
    assert parts == ["为什么要清零？", "另外需要裁剪吗？"]
    assert len(question_parts("Why is x.grad None after backward?")) == 1


def test_each_part_of_a_question_gets_its_own_paragraph_in_order() -> None:
    zero = Card(
        id="zero",
        read="accumulation/intro",
        answer=Both("ZERO answer.", "ZERO 回答。"),
        forms=Both(
            ("why do we call zero_grad in every iteration",), ("为什么每次迭代都调用 zero_grad",)
        ),
        why=Both("ZERO-WHY backward adds into grad.", "ZERO-WHY backward 会累加。"),
    )
    book = CardBook(CardSet((_card(), zero)))
    question = ("Why do we call zero_grad in every iteration? And should I also clip the "
                "gradients before the optimizer step?")
    found = book.match(question)
    assert found is not None and [found.card.id, *(m.card.id for m in found.more)] == [
        "zero", "clip"]
    text = compose(found, "en", NO_NAMES)
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("ZERO-WHY"), text
    assert paragraphs[1].startswith("Yes. CONDITION"), text
    # short: each part's lead, not every facet of both cards
    assert "PITFALL" not in text and "ZERO answer" not in text


def test_one_card_is_not_answered_twice_for_two_parts_that_ask_it() -> None:
    book = CardBook(CardSet((_card(),)))
    found = book.match("How do I clip the gradients before the optimizer step? Does clipping "
                       "the gradients change the optimizer step?")
    assert found is not None and found.more == ()


# ---------------------------------------------------------------- the learner's code

LOOP = """optimizer.zero_grad()
loss, hidden = model(data, hidden, targets)
loss.backward()
torch.nn.utils.clip_grad_norm(model.parameters(), args.clip)
optimizer.step()"""


@pytest.mark.parametrize(
    ("code", "fact", "shown"),
    [
        (LOOP, "clips-between-backward-and-step", "torch.nn.utils.clip_grad_norm(model."),
        ("loss.backward()\nopt.step()\nclip_grad_norm_(net.parameters(), 1.0)",
         "clips-after-step", "clip_grad_norm_(net.parameters(), 1.0)"),
        ("pred_real = netD(real)\npred_fake = netD(fake.detach())", "detaches-input",
         "netD(fake.detach())"),
        ("loss = criterion(out, y) / accum_steps\nloss.backward()", "divides-loss",
         "loss = criterion(out, y) / accum_steps"),
        ("for p in model.parameters():\n    p.grad /= n_steps", "divides-grad",
         "p.grad /= n_steps"),
        ("loss.backward()\nopt.zero_grad()\nopt.step()", "zero-grad-between-backward-and-step",
         "opt.zero_grad()"),
        ("with torch.no_grad():\n    w = w - lr * w.grad", "rebinds-under-no-grad",
         "w = w - lr * w.grad"),
        ("with torch.no_grad():\n    w -= lr * w.grad", "updates-in-place-under-no-grad",
         "w -= lr * w.grad"),
        ("loss.backward()\ntotal += loss", "sums-loss-tensor", "total += loss"),
        ("total += loss.item()", "logs-item", "total += loss.item()"),
        ("opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.cuda()",
         "optimizer-before-move", "model.cuda()"),
        ("model.eval()\nwith torch.no_grad():\n    out = model(x)", "eval-and-no-grad",
         "model.eval()"),
        ("self.blocks = [Block(d) for _ in range(n)]", "modules-in-plain-container",
         "self.blocks = [Block(d) for _ in range(n)]"),
        ("self.heads = {k: nn.Linear(8, 1) for k in tasks}", "modules-in-plain-container",
         "nn.ModuleDict"),
    ],
)
def test_each_code_fact_is_read_in_the_learners_own_statements(
    code: str, fact: str, shown: str
) -> None:
    found = {f.key: f for f in find(code, READERS)}
    assert fact in found, (fact, list(found))
    assert shown in worded(found[fact], "en") and shown in worded(found[fact], "zh")


@pytest.mark.parametrize(
    ("code", "fact"),
    [
        ("loss.backward()\nopt.step()\nclip_grad_norm_(net.parameters(), 1.0)",
         "clips-between-backward-and-step"),
        (LOOP, "clips-after-step"),
        ("with torch.no_grad():\n    w -= lr * w.grad", "rebinds-under-no-grad"),
        ("w = w - lr * w.grad", "rebinds-under-no-grad"),  # not under no_grad: no new leaf
        ("opt.zero_grad()\nloss.backward()\nopt.step()", "zero-grad-between-backward-and-step"),
        ("model.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)",
         "optimizer-before-move"),
        ("total += loss.item()", "sums-loss-tensor"),
        ("self.layers = nn.ModuleList([nn.Linear(2, 2)])", "modules-in-plain-container"),
        ("self.sizes = [64, 32]\nlayers = [nn.Linear(2, 2)]", "modules-in-plain-container"),
        # a loss defined as a ratio is no division of the loss
        ("a = torch.tensor(2., requires_grad=True); loss = 1/a; loss.backward()",
         "divides-loss"),
    ],
)
def test_a_code_fact_is_not_read_where_the_code_does_otherwise(code: str, fact: str) -> None:
    assert fact not in {f.key for f in find(code, READERS)}


def test_code_is_read_from_a_question_with_marks_after_its_lines() -> None:
    question = ("There is a detach():\npred_real = netD(real)            <<< no detach()\n"
                "pred_fake = netD(fake.detach())   <<< use detach()\nIs there a reason?")
    code = learner_code(question)
    assert "pred_real = netD(real)" in code and "<<<" not in code


def test_a_yes_no_question_about_code_that_already_does_it_says_so_first() -> None:
    card = _card(code_facts=(CodeFactUse("clips-between-backward-and-step", "yes"),
                             CodeFactUse("clips-after-step", "no")))
    book = CardBook(CardSet((card,)))
    question = f"My code:\n{LOOP}\nDoes clipping the gradients change the optimizer step?"
    text = _answer(book, question, code=learner_code(question))
    assert text.startswith("Yes. This code already clips in the right place: "
                           "`torch.nn.utils.clip_grad_norm(model.parameters(), args.clip)` "
                           "comes after `loss.backward()` and before `optimizer.step()`"), text
    late = "loss.backward()\noptimizer.step()\nclip_grad_norm_(model.parameters(), 1.0)"
    question = f"My code:\n{late}\nDoes clipping the gradients change the optimizer step?"
    text = _answer(book, question, code=learner_code(question))
    assert text.startswith("No. In this code `clip_grad_norm_(model.parameters(), 1.0)` comes "
                           "after `optimizer.step()`"), text


def test_the_bundled_clipping_card_reads_the_pasted_loop() -> None:
    course = load_course()
    question = f"My code is as follows:\n{LOOP}\nDoes this perform gradient clipping?"
    found = CardBook().match(question)
    assert found is not None
    text = card_text(course, found, "en", (question, "", ""))
    assert text.startswith("Yes. This code already clips in the right place"), text


# ---------------------------------------------------------------- run facts


@pytest.fixture(scope="module")
def tutor(sandbox: Sandbox) -> Tutor:
    return Tutor(load_course(), runner=sandbox)


REBOUND = """import torch
x = torch.ones(2, requires_grad=True)
x = x * 2
y = x.sum()
y.backward()
print(x.grad)"""


def test_a_why_question_about_a_pasted_program_leads_with_the_cause_in_it(tutor: Tutor) -> None:
    answer = tutor.ask(f"I wrote this:\n{REBOUND}\nWhy is x.grad None?")
    assert answer.text.startswith("`x` is not a leaf"), answer.text
    assert "Line 3 (`x = x * 2`)" in answer.text


def test_the_tutor_tab_explains_the_last_run_from_the_same_facts(
    tutor: Tutor, sandbox: Sandbox
) -> None:
    code = ("import torch\nw = torch.tensor([1., 2.], requires_grad=True)\nh = w * 3\n"
            "h.sum().backward()\nprint(h.grad)\n")
    run = sandbox.run(code, device="cpu")
    context = ChatContext(lesson_id="graph", step_id="leaf-or-not", code=code, last_run=run)
    for lang, said in (("en", "`h` is not a leaf"), ("zh", "`h` 不是叶子张量")):
        text = tutor.ask("why is h.grad None?", lang=lang, context=context).text  # type: ignore[arg-type]
        assert said in text, text
        # the facts say why: not the symptom's list of general causes after them
        assert "usual causes" not in text and "常见原因" not in text


def test_what_the_code_shows_picks_the_card_that_names_it() -> None:
    """Two cards near the question: the one naming a fact the pasted code shows answers."""
    generic = Card(
        id="generic",
        read="no-grad/intro",
        answer=Both("GENERIC.", "GENERIC。"),
        forms=Both(("why does the weight update fail in the next iteration",), ("更新失败",)),
    )
    rebinds = Card(
        id="rebinds",
        read="no-grad/sgd-by-hand",
        answer=Both("REBINDS a new tensor.", "REBINDS 新张量。"),
        forms=Both(("update fails",), ("更新在下一次迭代失败",)),
        code_facts=(CodeFactUse("rebinds-under-no-grad"),),
    )
    book = CardBook(CardSet((generic, rebinds)))
    question = ("My weight update fails in the next iteration:\n"
                "with torch.no_grad():\n    w = w - lr * w.grad\nWhy?")
    assert book.match(question).card.id == "generic"  # type: ignore[union-attr]
    found = book.match(question, code=learner_code(question))
    assert found is not None and found.card.id == "rebinds"
    text = compose(found, "en", NO_NAMES, code=learner_code(question))
    assert text.startswith("In this code `w = w - lr * w.grad` runs inside `torch.no_grad()`")
    # code that updates in place shows no rebinding: the words decide
    in_place = question.replace("w = w - lr * w.grad", "w -= lr * w.grad")
    assert book.match(in_place, code=learner_code(in_place)).card.id == "generic"  # type: ignore[union-attr]


def test_two_parts_on_one_lesson_are_one_answer() -> None:
    other = _card(id="clip-2", answer=Both("OTHER.", "OTHER。"),
                  forms=Both(("why does clipping after the optimizer step change nothing",),
                             ("为什么 step 之后裁剪没用",)))
    book = CardBook(CardSet((_card(), other)))
    found = book.match("How do I clip the gradients before the optimizer step? And why does "
                       "clipping after the optimizer step change nothing?")
    assert found is not None and found.more == ()


def test_an_exercise_prompt_is_not_the_answer_when_its_lessons_reading_matched(
        tutor: Tutor) -> None:
    """The retrieval's best passage may be an exercise prompt (it sets a task, it explains
    nothing): its instructions were pasted as the answer. The lesson's reading among the hits
    is shown instead."""
    from tutor.chat.retrieval import Hit

    prompt = tutor.passages["errors/inplace-saved"]
    reading = next(p for p in tutor.passages.values()
                   if p.lesson_id == "errors" and p.step_id == "intro")
    sources: list[str] = []
    parts = tutor._compose([Hit(prompt, 9.0), Hit(reading, 5.0)], "en", sources)
    assert prompt.text.en.split("\n")[0] not in "\n".join(parts)
    assert sources[0] == reading.id
