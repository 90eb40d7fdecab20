# expect: view-invalid-shape
import torch

batch = torch.randn(4, 16, 5, 5)
flat = batch.view(4, 16 * 4 * 4)
