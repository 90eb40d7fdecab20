# autograd-tutor · Mini: non-scalar outputs, detach and no_grad
# 3. Stop tracking  (code exercise, mini-graph/no-grad-print)
#
# Inside `with torch.no_grad():` compute `w = x * 2` and print `w.requires_grad`. Then make `d = x.detach()`.
#
# Hints: 2 locked. In `tutor watch`, press h to reveal them one at a time.
# Save the file and `tutor watch` grades it; `tutor verify` grades every file.
# Write your code below this line.
# ========================================================================
import torch

x = torch.ones(2, requires_grad=True)
