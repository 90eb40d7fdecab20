"""The got/expected lines under a failed comparison, in both languages (grading's catalog),
and the student's copy that cuts the expected line in either language."""

from __future__ import annotations

from tutor.export.platforms import student_output
from tutor.grading.compare import Normal, _detail
from tutor.i18n import T

TENSOR = Normal(kind="tensor", type_name="Tensor", shape=(2, 3), dtype="torch.float32",
                text="[[1, 2, 3], [4, 5, 6]]")
SCALAR = Normal(kind="tensor", type_name="Tensor", shape=(), text="{x}")
NUMBER = Normal(kind="scalar", type_name="float", text="1.5")


def test_got_and_expected_in_both_languages() -> None:
    assert _detail(TENSOR, SCALAR) == T(
        "got: tensor [[1, 2, 3], [4, 5, 6]] (shape (2, 3), torch.float32)\n"
        "expected: tensor {x} (shape ())",
        "得到：tensor [[1, 2, 3], [4, 5, 6]]（形状 (2, 3)，torch.float32）\n"
        "应为：tensor {x}（形状 ()）")
    assert _detail(NUMBER, TENSOR, reveal=False) == T("got: 1.5 (float)", "得到：1.5（float）")


def test_the_students_copy_cuts_the_expected_line_in_either_language() -> None:
    detail = _detail(NUMBER, SCALAR)
    assert student_output(detail.en, passed=False) == "got: 1.5 (float)"
    assert student_output(detail.zh, passed=False) == "得到：1.5（float）"
    assert student_output(detail.zh, passed=True) == detail.zh
