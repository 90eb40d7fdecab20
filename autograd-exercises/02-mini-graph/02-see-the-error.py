# autograd-tutor · Mini: non-scalar outputs, detach and no_grad
# 2. Trigger the error on purpose  (code exercise, mini-graph/see-the-error)
#
# Call `backward()` on the non-scalar `z = x * 2` (with `x = torch.ones(3, requires_grad=True)`) and watch it fail.
#
# Hints: 2 locked. In `tutor watch`, press h to reveal them one at a time.
# Save the file and `tutor watch` grades it; `tutor verify` grades every file.
# Write your code below this line.
# ========================================================================
import torch
