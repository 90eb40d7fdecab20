"""The text contract (tutor/diagnosis/contract.py): no placeholder, lines from one source, the
program's own names as written, no fix that changes nothing, Chinese without stray spaces.
Checked on every diagnosis the engine gives for every program of the dev corpora, in both
languages, and rule by rule on texts made to break it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosis.runs import failed, tensor
from tutor.diagnosis import diagnose_error
from tutor.diagnosis.contract import violations
from tutor.diagnosis.filling import tidy_chinese
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.source import Source
from tutor.i18n import T, Text
from tutor.sandbox import Sandbox

HERE = Path(__file__).parent
PROGRAM = """import torch
x = torch.randn(4, 3)
w = torch.randn(3, requires_grad=True)
y = x.view(-1,3) @ w
y.backward()
"""


def _diagnosis(**texts: Text | None) -> Diagnosis:
    fields: dict[str, object] = {"title": T("`y` is not a scalar", "`y` 不是标量"),
                                 "explanation": T("`y` has four elements.", "`y` 有四个元素。"),
                                 "fix": T("Sum it first: `y.sum().backward()`.",
                                          "先求和：`y.sum().backward()`。")}
    fields.update(texts)
    return Diagnosis(id="non-scalar-backward", severity="error", line=5, **fields)


def test_a_diagnosis_in_the_learners_terms_keeps_the_contract() -> None:
    assert violations(_diagnosis(), PROGRAM) == []


@pytest.mark.parametrize(("texts", "problem"), [
    ({"explanation": T("`y` has shape (not recorded).", "`y` 的形状是（未记录）。")},
     "placeholder"),
    ({"explanation": T("the loss went from ? to ?", "损失从 ? 变为 ?")}, "placeholder"),
    ({"title": T("{var} is not a scalar", "{var} 不是标量")}, "placeholder"),
    ({"title": T("`y` on line 3 is not a scalar", "第 3 行的 `y` 不是标量")}, "is about line"),
    ({"explanation": T("see line 5", "见第 4 行")}, "in Chinese"),
    ({"fix": T("look at line 40", "看第 40 行")}, "not in the program"),
    ({"fix": T("Sum it: `t.sum().backward()`.", "求和：`t.sum().backward()`。")},
     "names t, which the program does not have"),
    ({"explanation": T("`x.view(-1, 3)` has 12 elements", "`x.view(-1, 3)` 有 12 个元素")},
     "rewritten"),
    ({"fix": T("Write `y.backward()`.", "写成 `y.backward()`。")}, "changes nothing"),
    ({"fix": T("Update:\n```\nw -= lr * w.grad\n```", "更新：\n```\nw -= lr * w.grad\n```")},
     "names lr"),
    ({"explanation": T("`y` has four elements.", "`y` 有 四个 元素 。")}, "stray space"),
])
def test_each_rule_finds_a_text_that_breaks_it(texts: dict[str, Text], problem: str) -> None:
    found = violations(_diagnosis(**texts), PROGRAM)
    assert any(problem in v for v in found), found


def test_a_layer_inside_a_sequential_is_named_as_the_code_reaches_it() -> None:
    from tutor.diagnosis.operand_checks import module_label

    assert module_label("model.classifier.1") == "classifier[1]"
    assert module_label("model.fc") == "fc"


def test_chinese_loses_the_spaces_a_template_leaves_and_keeps_code() -> None:
    tidy = tidy_chinese("该张量 的形状是 （3,） ，`a  b` 不变")
    assert tidy == "该张量的形状是（3,），`a  b` 不变"
    assert tidy_chinese("第 3 行的 `x` 和 autograd") == "第 3 行的 `x` 和 autograd"


def test_chinese_lists_names_with_the_enumeration_comma() -> None:
    """Names a check joins in code for both languages (```b`, `w```) read as a Chinese list
    (```b`、`w```); a comma inside a code span, or between plain words, stays."""
    assert tidy_chinese("改动后程序能完整运行；`b`, `w` 现在得到了梯度") == (
        "改动后程序能完整运行；`b`、`w` 现在得到了梯度")
    assert tidy_chinese("`x`, `y`, `z` 不变") == "`x`、`y`、`z` 不变"
    assert tidy_chinese("`torch.randn(3, 4)` 和 a, b") == "`torch.randn(3, 4)` 和 a, b"


def test_names_are_quoted_from_the_source_as_written() -> None:
    source = Source.of(PROGRAM)
    assert source is not None
    site = next(s for s in source.calls_at(4) if s.name == "view")
    assert site.receiver == "x"
    assert Source.call_site(site.node).callee == "x.view"
    from tutor.diagnosis.source import source_text
    assert source_text(site.node) == "x.view(-1,3)"  # not ast.unparse's x.view(-1, 3)


def test_an_unknown_fact_picks_the_variant_written_without_it() -> None:
    code = "import torch\nout = model(x)\n"
    # nothing of the subject is known: no snapshot, no variable on the line
    got = diagnose_error(failed(code, "RuntimeError",
                                "grad can be implicitly created only for scalar outputs", 2), code)
    assert got is not None and got.id == "non-scalar-backward"
    assert violations(got, code) == [], violations(got, code)
    # known, the entry's own words are used, with the facts
    code = "import torch\nz = torch.ones(3, requires_grad=True) * 2\nz.backward()\n"
    got = diagnose_error(failed(code, "RuntimeError",
                                "grad can be implicitly created only for scalar outputs", 3,
                                z=tensor([3], requires_grad=True, is_leaf=False,
                                         grad_fn="MulBackward0")), code)
    assert got is not None and "(3,)" in got.explanation.en and "z.sum()" in got.fix.en


# -- every dev program -----------------------------------------------------------------
def _dev_programs() -> list[tuple[str, str]]:
    import yaml  # type: ignore[import-untyped]

    programs = [(f"{folder}/{p.stem}", p.read_text(encoding="utf-8"))
                for folder in ("corpus", "heldout", "heldout2")
                for p in sorted((HERE / folder).glob("*.py"))]
    for folder, split in (("corpus2", "dev"), ("corpus2", "test"), ("corpus3", "test"),
                          ("shapes_dev", "dev")):
        with (HERE / folder / f"{split}.yaml").open(encoding="utf-8") as handle:
            items = yaml.safe_load(handle)["items"]
        programs += [(f"{folder}/{item['id']}", item["code"]) for item in items]
    return programs


DEV = _dev_programs()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), DEV, ids=[n for n, _ in DEV])
def test_every_diagnosis_of_a_dev_program_keeps_the_contract(name: str, code: str,
                                                             sandbox: Sandbox) -> None:
    from tutor.diagnosis import explain
    from tutor.diagnosis.reasoning import diagnose

    result = sandbox.run(code)
    # from the evidence, and from the run alone (what a face shows without a re-run)
    found = diagnose(code, result, sandbox) + explain(result, code)
    broken = {d.id: violations(d, code) for d in found}
    assert not any(broken.values()), broken


def test_words_a_check_builds_in_code_lose_stray_chinese_spaces_too() -> None:
    from tutor.diagnosis.filling import tidied

    built = _diagnosis(fix=T("Move line 3 above line 5.", "把第 3 行 移到 第 5 行之前 。"),
                       chain=[T("step", "重新运行时 看到 了")])
    assert violations(built, PROGRAM)
    tidy = tidied(built)
    assert (tidy.fix.zh, tidy.chain[0].zh) == ("把第 3 行移到第 5 行之前。", "重新运行时看到了")
    assert violations(tidy, PROGRAM) == []

