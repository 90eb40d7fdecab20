# autograd-tutor · Mini: requires_grad and backward
# 2. Your first backward  (code exercise, mini-basics/first-backward)
#
# Create `x = torch.ones(2, 2, requires_grad=True)`, compute `y = x + 2`,
# `z = (y * y * 3).mean()`, then call `z.backward()`.
#
# Hints: 2 locked. In `tutor watch`, press h to reveal them one at a time.
# Save the file and `tutor watch` grades it; `tutor verify` grades every file.
# Write your code below this line.
# ========================================================================
import torch

x = torch.ones(2, 2, requires_grad=True)
# your code here
