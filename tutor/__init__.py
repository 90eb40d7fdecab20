"""autograd-tutor: a terminal tutor that teaches PyTorch autograd.

Layers (imports point down only, kept by ``tests/test_layers.py``):

* ``tutor.course`` and ``tutor.sandbox`` at the bottom;
* ``tutor.grading``, ``tutor.diagnosis``, ``tutor.chat``, ``tutor.progress`` over them;
* ``tutor.tui`` and ``tutor.cli`` on top, as thin faces.
"""

__version__ = "0.1.0"
