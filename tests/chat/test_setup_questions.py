"""Questions about the learner's setup (installing, CUDA and PyTorch versions, drivers, git,
another framework, buying hardware) that use PyTorch's words but none of autograd's are
declined politely, in the question's language, saying why and what the tutor can do; a
question about autograd that mentions the setup in passing is still answered."""

from __future__ import annotations

import pytest

from tutor.chat import Tutor
from tutor.chat.quick import quick_answer
from tutor.course import load_course


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    return Tutor(load_course())


@pytest.mark.parametrize(
    ("question", "why"),
    [
        ("I installed PyTorch 2.3 built for CUDA 12.1 but nvidia-smi shows driver 470. "
         "Which driver should I get?", "setting up your machine"),
        ("My CUDA version is 11.8 but PyTorch was compiled with 12.1, is that a problem?",
         "setting up your machine"),
        ("git pull says my branch and origin/master have diverged, my PyTorch project is "
         "stuck. How do I fix it?", "setting up your machine"),
        ("Should I learn JAX or PyTorch first for deep learning models?", "another framework"),
        ("装的 PyTorch 是 CUDA 12.1 版的，nvidia-smi 显示显卡驱动是 470，该装哪个驱动？",
         "配置机器"),
        ("CUDA 版本和编译 PyTorch 的版本不一致，要重装吗？", "配置机器"),
        ("git 推送代码被拒绝了，我的 PyTorch 项目交不上去，怎么解决？", "配置机器"),
        ("Which GPU should I buy for training PyTorch models, my budget is $800?", "Buying"),
        ("训练 PyTorch 模型买哪款显卡性价比高？预算 5000 元", "买什么硬件"),
        # a PaddleOCR config's key (learner16 zh-0cc378f9, after its scoring): Paddle's flag,
        # set in YAML, was answered with the detach() card
        ("微调det_v4时，在config文件里，添加配置stop_gradient:true，冻结层，有用吗",
         "另一个框架"),
        # Paddle's API and its error class prefix, named nowhere (learner24 zh-455f8595, after
        # its scoring): answered as PyTorch's backward-twice error
        ("梯度回传报错\n\nstart_logit.backward(retain_graph=False)\nmodel.clear_gradients()\n\n"
         "RuntimeError: (AlreadyExists) Accumulators are not empty before preparing it for "
         "backward network execution.", "另一个框架"),
        ("My second backward fails:\nloss.backward()\nmodel.clear_gradients()\n"
         "ValueError: (InvalidArgument) The Tensor of Grad is not initialized.",
         "another framework"),
    ],
)
def test_setup_questions_with_pytorch_words_are_declined_saying_why(
    tutor: Tutor, question: str, why: str
) -> None:
    answer = tutor.ask(question)
    assert answer.kind == "off_topic", answer.text
    assert why in answer.text and "backward()" in answer.text  # why, and what it can do


@pytest.mark.parametrize(
    "question",
    [
        "After installing PyTorch 2.3 my x.grad is None after loss.backward(). Why?",
        "升级 PyTorch 版本以后，loss.backward() 报 element 0 of tensors does not require grad",
    ],
)
def test_an_autograd_question_that_mentions_the_setup_is_answered(
    tutor: Tutor, question: str
) -> None:
    assert tutor.ask(question).kind != "off_topic"


def test_the_shell_gives_the_same_decline(tutor: Tutor) -> None:
    question = "git push is rejected (non-fast-forward) for my pytorch repo, what now?"
    quick = quick_answer(tutor.course, question, "en")
    assert quick is None or quick.answer_kind == "off_topic"
    assert tutor.ask(question).kind == "off_topic"

