# autograd-tutor · Mini: non-scalar outputs, detach and no_grad
# 4. A function that returns a gradient  (code exercise, mini-graph/grad-function)
#
# Write `grad_of_square(t)` that returns the gradient of `(t ** 2).sum()` with respect to `t` (a new tensor, `t` itself untouched).
#
# Hints: 2 locked. In `tutor watch`, press h to reveal them one at a time.
# Save the file and `tutor watch` grades it; `tutor verify` grades every file.
# Write your code below this line.
# ========================================================================
import torch


def grad_of_square(t):
    ...
