"""Never a name that is not the learner's or the lesson's (issue 20, item 3): every identifier
an answer shows in code is the learner's, the lesson's, PyTorch's or Python's, or defined by
the answer's own example; over every question of every dev and training set and every card.
The learner's own optimizer, model and loss take the place of a card's placeholders."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fresh_process import run_fresh

from tutor.chat import ChatContext, Tutor
from tutor.chat.cards import CardBook, Match, Names, compose, learner_names
from tutor.chat.models import Answer
from tutor.chat.names import (
    API_FILE,
    api_names,
    code_names,
    confine,
    elides_an_operand,
    foreign,
    identifiers,
    shown,
    step_names,
)
from tutor.chat.quick import quick_answer
from tutor.chat.roles import fill_span, find_roles, roles
from tutor.course import load_course
from tutor.yaml_read import load as yaml_load

HERE = Path(__file__).parent
SETS = [
    path
    for n in ("", "2", "3", "4", "6")
    for path in sorted((HERE / f"learner{n}").glob("*.yaml"))
] + sorted(HERE.glob("heldout*.yaml")) + [HERE / "questions.yaml"]
"""Every dev and training question set (learner5 is the frozen test split: not read)."""
KINDS = ("what", "why", "how", "compare", "can", "safe", "fails", "value")


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    """The bundled course's tutor (no sandbox: these answers come from its text)."""
    return Tutor(load_course())


def _questions() -> list[tuple[str, str]]:
    out = []
    for path in SETS:
        for item in yaml_load(path.read_text(encoding="utf-8")):
            out.append((item["q"], item.get("lang") or ""))
    return out


def _lesson_names(tutor: Tutor, answer: Answer, step_ref: str | None) -> frozenset[str]:
    """The lesson's names for ``answer``: the open step's, and those of each lesson text the
    answer quotes (a passage it names whose line it shows, or the step whose hint it gives)."""
    names: set[str] = set()
    refs = [step_ref] if step_ref else []
    for source in answer.sources:
        passage = tutor.passages.get(source)
        if answer.kind == "hint" and "/" in source and ":" not in source:
            refs.append(source)
        elif passage is not None and passage.source == "lesson":
            lines = f"{passage.text.en}\n{passage.text.zh}\n{passage.code or ''}".splitlines()
            if any(len(line.strip()) >= 25 and line.strip() in answer.text for line in lines):
                names |= identifiers("\n".join(lines))
    for ref in refs:
        _, step = tutor.course.find(ref)
        names |= step_names(step)
    return frozenset(names)


# ---------------------------------------------------------------- the principled list


def _fresh_torch_names() -> tuple[set[str], set[str]]:
    """torch_names() in a fresh interpreter: what other tests imported into this process
    (a torch submodule loaded lazily adds members) must not change what is compared."""
    script = ("import json; from tutor.chat.names import torch_names; "
              "m, p = torch_names(); print(json.dumps([sorted(m), sorted(p)]))")
    members, params = json.loads(run_fresh(script)[-1])
    return set(members), set(params)


def test_the_api_names_are_torchs_public_namespace_as_installed() -> None:
    members, params = _fresh_torch_names()
    listed = [line for line in API_FILE.read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    cut = listed.index("[params]")
    assert set(listed[:cut]) == members and set(listed[cut + 1:]) == params
    # what a learner calls is there; a variable's name is not
    for name in ("backward", "requires_grad", "zero_grad", "detach", "Linear", "no_grad",
                 "retain_grad", "MulBackward0", "param_groups", "running_mean", "torch", "F"):
        assert name in api_names(), name
    for name in ("x", "y", "w", "loss", "model", "optimizer", "netD", "inputs", "output"):
        assert name not in api_names(), name


def test_code_names_are_roots_keywords_and_what_the_code_defines() -> None:
    names = code_names("for p in net.fc.parameters(): p.requires_grad_(False)")
    assert names.used == {"net", "p"} and "p" in names.defined
    assert code_names("loss.backward(retain_graph=True)").keywords == {"retain_graph"}
    # a member alone, a message, a shape, a command, Python's own names: no name of a program
    for text in (".grad.zero_()", "RuntimeError: element 0 of tensors does not require grad",
                 "nvidia-smi", "__init__", "(节点, 序号)"):
        assert not code_names(text).used, text


def test_foreign_names_are_what_has_no_source() -> None:
    text = (
        "Call `netD(fake.detach())`, then `optimizer.step()`; pass `retain_graph=True`.\n\n"
        "```python\nimport torch\nw = torch.ones(2, requires_grad=True)\n(w * 2).sum()."
        "backward()\nprint(w.grad)\n```\n\n`w.grad` holds it."
    )
    # the example defines w; netD, fake and optimizer come from nowhere
    assert foreign(text) == ["fake", "netD", "optimizer"]
    assert foreign(text, {"netD", "fake", "optimizer"}) == []
    # a parameter of torch's is named as a call's keyword, never as a variable would be
    assert foreign("pass `retain_graph=True` to it") == []
    assert foreign("the `retain_graph` argument") == ["retain_graph"]


# ---------------------------------------------------------------- the learner's names


def test_the_learners_optimizer_model_and_loss_take_the_placeholders() -> None:
    code = (
        "net = Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "out = net(x)\ncost = crit(out, y)\ncost.backward()\nopt.step()"
    )
    named = dict(find_roles(code))
    assert named == {"optimizer": "opt", "model": "net", "loss": "cost"}
    assert fill_span("{optimizer}.zero_grad()", named, "en") == "`opt.zero_grad()`"
    # none named: the part in words, never a variable the learner does not have
    assert fill_span("{optimizer}.zero_grad()", {}, "en") == "your optimizer's `.zero_grad()`"
    assert fill_span("{optimizer}.zero_grad()", {}, "zh") == "优化器的 `.zero_grad()`"
    assert fill_span("clip_grad_norm_({model}.parameters(), 1.0)", {}, "en") == \
        "`clip_grad_norm_(..., 1.0)`"
    assert fill_span("{model}", {}, "zh") == "模型"


def test_a_card_speaks_of_the_learners_own_optimizer_and_loss() -> None:
    card = next(c for c in CardBook().cards if c.id == "zero-grad-where")
    match = Match(card, 1.0, "how", by_signal=True, read=card.read)
    code = (
        "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor x, y in data:\n"
        "    cost = crit(net(x), y)\n    cost.backward()\n    opt.step()"
    )
    text = compose(match, "en", learner_names("Where does zero_grad go?", code))
    assert "`opt.step()`" in text and "`cost.backward()`" in text, text
    assert "optimizer" not in text and "{" not in text
    # a learner who named nothing reads words, in either language
    plain = compose(match, "en", Names())
    assert "your optimizer's `.step()`" in plain and "the loss's `.backward()`" in plain, plain
    assert "优化器的 `.step()`" in compose(match, "zh", Names())


def test_a_name_without_a_source_is_said_without_it() -> None:
    text = "Move it with `model.to(device)`, cast `x.float()`, build `torch.optim.SGD([w])`."
    assert confine(text, set(), "en") == (
        "Move it with your model's `.to(device)`, cast `.float()`, build "
        "`torch.optim.SGD([...])`."
    )
    # the learner's own names stay
    assert confine(text, {"model", "x", "w"}, "en") == text


def test_a_name_inside_an_expression_takes_its_sentence_along() -> None:
    """``... * x`` and ``....device`` say nothing a learner can follow (learner5 en-d9614cea,
    zh-6a9336b1): the sentence goes, the rest of the paragraph stays."""
    text = ("It is a constant. Gradients still flow through it: `w * x` with a frozen `x` "
            "still gives `w` its gradient. It is the default.\n\nNext.")
    assert confine(text, {"x"}, "en") == "It is a constant. It is the default.\n\nNext."
    zh = "它是常量。梯度仍然会穿过它：`w * x` 里 `x` 被冻结，`w` 照样得到梯度。这是默认值。"
    assert confine(zh, {"x"}, "zh") == "它是常量。这是默认值。"
    last = "Make it there. Use `torch.ones(3, device=h.device)`.\n\nThen run."
    assert confine(last, set(), "en") == "Make it there.\n\nThen run."
    # an elided argument or value still reads: only operands and receivers count
    assert not elides_an_operand("`torch.optim.SGD([...])`")
    assert not elides_an_operand("`x[0] = ...`") and not elides_an_operand("`inputs=...`")
    assert not elides_an_operand("`w -= ...`")
    assert elides_an_operand("`... * x`") and elides_an_operand("`w = w - ...`")
    assert elides_an_operand("`... += x`")
    assert elides_an_operand("`torch.ones(..., device=....device)`")


def _elided(text: str) -> list[str]:
    return [piece.text for piece in shown(text)
            if not piece.block and elides_an_operand(piece.text)]


def _every_card_for_a_neutral_learner() -> Iterator[tuple[tuple[str, str, str], str]]:
    """((card, kind, language), the answer) for each card composed for a learner who named
    nothing, for every kind of question, in both languages."""
    for card in CardBook().cards:
        for kind in KINDS:
            for lang in ("en", "zh"):
                match = Match(card, 1.0, kind, by_signal=True, read=card.read,  # type: ignore[arg-type]
                              verdict=card.verdict)
                yield (card.id, kind, lang), compose(match, lang, Names())


def test_no_card_says_an_operand_as_dots() -> None:
    """No span of a card's answer stands ``...`` for an operand or a receiver: a part the
    learner does not name is said in words (``{or: ...}``), or the span is written without
    it."""
    found = {key: spans for key, text in _every_card_for_a_neutral_learner()
             if (spans := _elided(text))}
    assert not found, found


# ---------------------------------------------------------------- every card, every set


def test_every_card_answered_for_a_neutral_question_names_nothing_of_its_own() -> None:
    """No identifier outside PyTorch's, Python's and the card's own example's."""
    found = {key: names for key, text in _every_card_for_a_neutral_learner()
             if (names := foreign(text))}
    assert not found, found


def test_no_answer_names_what_is_neither_the_learners_nor_the_lessons(tutor: Tutor) -> None:
    """Every question of every dev and training set, from the shell and from the TUI on a
    step: every identifier shown in code is the learner's, the lesson's, PyTorch's or
    Python's, or defined by the answer's own example."""
    found = {}
    step = ChatContext(lesson_id="backward", step_id="intro")
    for question, lang in _questions():
        for context in (None, step):
            answer = tutor.ask(question, lang=lang or None, context=context)  # type: ignore[arg-type]
            ref = context.step_ref if context is not None else None
            allowed = identifiers(question) | _lesson_names(tutor, answer, ref)
            names = foreign(answer.text, allowed) + _elided(answer.text)
            if names:
                found[(question[:60], ref)] = names
    assert not found, found


def test_tutor_ask_from_the_shell_names_nothing_of_its_own(tutor: Tutor) -> None:
    found = {}
    for question, lang in _questions():
        quick = quick_answer(tutor.course, question, lang or "en")
        if quick is not None and quick.answer_kind == "answer":
            names = foreign(quick.text, identifiers(question))
            if names:
                found[question[:60]] = names
    assert not found, found


def test_every_role_is_found_by_code_never_by_words_alone() -> None:
    """find_roles skips a text with no '.', '(' or '=': each pattern needs one of them."""
    for role in roles().values():
        for pattern in role.found_by:
            assert any(mark in pattern for mark in (r"\.", r"\(", "=")), (role.key, pattern)
    assert find_roles("why does my optimizer not step") == ()


def test_learner_names_read_the_roles_of_question_and_code() -> None:
    code = "s = torch.optim.lr_scheduler.StepLR(o, 1)"
    assert dict(learner_names("why does s.step() warn?", code).roles)["scheduler"] == "s"


def test_a_layer_built_and_called_at_once_is_no_model() -> None:
    """learner15 zh-b8fbf492 (after its scoring): `z = nn.Linear(8, 32)(inp)` made `z` (a
    tensor) the model an answer's `{model}.parameters()` named."""
    assert dict(find_roles("z = nn.Linear(8, 32)(inp)\n")).get("model") is None
    assert dict(find_roles("net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())\n"))["model"] == "net"
    assert dict(find_roles("clf = MyNet(3, hidden=(4, 4))\n"))["model"] == "clf"
