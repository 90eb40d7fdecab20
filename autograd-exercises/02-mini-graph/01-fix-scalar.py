# autograd-tutor · Mini: non-scalar outputs, detach and no_grad
# 1. Fix the non-scalar backward  (fix the bug, mini-graph/fix-scalar)
#
# This code raises "grad can be implicitly created only for scalar outputs". Fix it so `x.grad` is filled.
#
# Hints: 2 locked. In `tutor watch`, press h to reveal them one at a time.
# Save the file and `tutor watch` grades it; `tutor verify` grades every file.
# Write your code below this line.
# ========================================================================
import torch

x = torch.ones(2, requires_grad=True)
z = x + 2
z.backward()
