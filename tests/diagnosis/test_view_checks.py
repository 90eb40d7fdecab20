"""A row of ``for row in tensor`` modified in place: iterating made all the rows at once,
views autograd forbids modifying in place. The rows are indexed one at a time instead, so
the change still reaches the tensor, and that is tried; a loop over a computed expression
(indexing would compute it again) is not rewritten."""

from __future__ import annotations

from typing import Any

from .runs import diagnoses_for

HEAD = """import torch
torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
"""

PLAIN = HEAD + """scores = w * 2
for row in scores:
    row.mul_(0.5)
scores.sum().backward()
print(w.grad)
"""

ZIPPED = HEAD + """def rescale(batch, factors):
    for i, (row, f) in enumerate(zip(batch, factors)):
        row /= f
    return batch


out = rescale(w + 1, [1.0, 2.0, 4.0])
out.sum().backward()
print(w.grad)
"""


def test_rows_of_an_iterated_tensor_are_indexed_one_at_a_time(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, PLAIN)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("iterated-rows-modified", 5, True)
    assert first.patch is not None and \
        "+for row in (scores[i] for i in range(len(scores))):" in first.patch
    assert "`row`" in first.title.en and "line 6" in first.title.en


def test_a_row_zipped_with_other_values_is_found_by_its_position(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, ZIPPED)[0]
    # `i` is taken by the loop itself: the index gets another name
    assert (first.id, first.root_line, first.fix_verified) == ("iterated-rows-modified", 5, True)
    assert first.patch is not None and "zip((batch[j] for j in range(len(batch))), factors)" \
        in first.patch


COMPUTED = HEAD + """for row in w * 2:
    row.mul_(0.5)
"""


def test_a_loop_over_a_computed_expression_is_not_rewritten(sandbox: Any) -> None:
    assert not [d for d in diagnoses_for(sandbox, COMPUTED) if d.id == "iterated-rows-modified"]


THROUGH_A_CALL = HEAD + """def scale_(row, k):
    row.mul_(k)


scores = w * 2
for r in scores:
    scale_(r, 0.5)
scores.sum().backward()
print(w.grad)
"""


def test_a_row_changed_by_a_function_it_is_passed_to_is_indexed_where_iterated(
        sandbox: Any) -> None:
    # making `row.mul_(k)` out of place would run and scale nothing: the function's change is
    # for its caller's tensor (a judged wrong of 2026-12-07-g, through make_grid's norm_ip)
    first = diagnoses_for(sandbox, THROUGH_A_CALL)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("iterated-rows-modified", 9, True)
    assert first.patch is not None and \
        "+for r in (scores[i] for i in range(len(scores))):" in first.patch
    assert "row = row.mul(k)" not in (first.patch or "") + first.fix.en


INDEXED = HEAD + """def denorm(image, means=(0.5, 0.25, 0.0)):
    out = image.clone()
    for channel, mean in zip(out[0], means):
        channel.add_(mean)
    return out


print(denorm(w.view(1, 3, 4)).sum())
"""


def test_rows_of_an_indexed_tensor_are_indexed_too(sandbox: Any) -> None:
    first = diagnoses_for(sandbox, INDEXED)[0]
    assert (first.id, first.root_line, first.fix_verified) == ("iterated-rows-modified", 6, True)
    assert first.patch is not None and "zip((out[0][i] for i in range(len(out[0]))), means)" \
        in first.patch
