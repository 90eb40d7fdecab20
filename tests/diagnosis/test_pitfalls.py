"""Static pitfalls: each rule finds its mistake and stays quiet on the correct variants."""

from __future__ import annotations

import textwrap

import pytest

from tutor.diagnosis import find_pitfalls


def hits(code: str) -> list[tuple[str, int | None, str | None]]:
    return [(d.id, d.line, d.variable) for d in find_pitfalls(textwrap.dedent(code))]


LOOP_WITHOUT_ZERO = """
import torch
w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(10):
    loss = (w - 1).pow(2).sum()
    loss.backward()
    opt.step()
"""


def test_training_loop_without_zero_grad() -> None:
    assert hits(LOOP_WITHOUT_ZERO) == [("missing-zero-grad", 7, "loss")]


@pytest.mark.parametrize(
    "clear",
    ["opt.zero_grad()", "w.grad = None", "w.grad.zero_()", "w.grad.data.zero_()",
     "opt.zero_grad(set_to_none=True)"],
)
def test_any_way_of_clearing_gradients_counts(clear: str) -> None:
    code = LOOP_WITHOUT_ZERO.replace("    loss = ", f"    {clear}\n    loss = ")
    assert "missing-zero-grad" not in [h[0] for h in hits(code)]


def test_a_loop_that_only_accumulates_on_purpose_is_not_a_training_loop() -> None:
    code = """
    import torch
    x = torch.tensor(1.0, requires_grad=True)
    for i in range(3):
        (x * x).backward()
    print(x.grad)
    """
    assert hits(code) == []


def test_manual_update_loop_without_clearing() -> None:
    code = """
    import torch
    b = torch.zeros(1, requires_grad=True)
    while True:
        err = (b - 4).abs().sum()
        err.backward()
        with torch.no_grad():
            b -= 0.5 * b.grad
        break
    """
    assert [h[0] for h in hits(code)] == ["missing-zero-grad"]


def test_data_attribute_on_tensors_only() -> None:
    code = """
    import torch
    w = torch.randn(3, requires_grad=True)
    scale = w.data.norm()
    for p in model.parameters():
        p.data -= 0.1 * p.grad.data
    dataset = load()
    rows = dataset.data.shape
    y = w * 2
    n = len(y)
    z = y.data * n.data
    """
    assert [(h[0], h[1]) for h in hits(code)] == [
        ("data-attribute", 4), ("data-attribute", 6), ("data-attribute", 11)
    ]


def test_data_written_as_an_update_after_backward_is_no_pitfall() -> None:
    """A loss weight updated by hand through ``.data`` after backward() (corpus11's
    multitask-loss-weights-learned-without-constraint was blamed on it; its cause was the loss
    itself), and a gradient's ``.data``: no graph records either. Writing ``.data`` between a
    forward pass and its backward() still is one."""
    code = """
    import torch
    w = torch.tensor(1.0, requires_grad=True)
    for step in range(3):
        loss = (w * 2) ** 2
        loss.backward()
        w.data -= 0.1 * w.grad.data
        w.data = w.data - 0.1 * w.grad.data
        w.grad.data.zero_()
        with torch.no_grad():
            w.data.clamp_(min=0)
    v = torch.ones(2, requires_grad=True)
    out = (v * 3).sum()
    v.data.mul_(0.5)
    out.backward()
    """
    assert [(h[0], h[1]) for h in hits(code)] == [("data-attribute", 14)]


def test_data_written_by_an_init_function_is_no_pitfall() -> None:
    """``m.weight.data.normal_()`` in ``__init__``, a reset/init function or one given to
    ``.apply()`` sets starting values before any graph exists (three judged silent bugs of
    corpus35 and corpus39 were blamed on it); a ``.data`` write in a forward still is one."""
    code = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.fc.weight.data.normal_(0, 0.01)
        def reset_parameters(self):
            self.fc.bias.data = torch.zeros(2)
        def forward(self, x):
            self.fc.weight.data.clamp_(-1, 1)
            return self.fc(x)
    def weights(m):
        nn.init.xavier_uniform_(m.weight.data)
    Net().apply(weights)
    """
    assert [(h[0], h[1]) for h in hits(code)] == [("data-attribute", 12)]


def test_data_read_only_to_be_shown_is_no_pitfall() -> None:
    """``print(outputs.data)`` changes nothing autograd sees: corpus6's
    cross-entropy-one-score-per-sample-float-labels was diagnosed as that and nothing else."""
    code = """
    import torch
    w = torch.randn(3, requires_grad=True)
    print(w.data.norm(), f"{w.data.mean():.3f}")
    print("w:", w.data.cpu().numpy())
    w.data.mul_(0.5)
    """
    assert [(h[0], h[1]) for h in hits(code)] == [("data-attribute", 6)]


def test_a_line_that_only_computes_throws_its_result_away() -> None:
    """``next_q.detach()`` alone on its line (corpus6 dqn-next-q-detach-discarded) and
    arithmetic on a line of its own; a module's in-place ``.to()``, an in-place method, a
    set's ``add`` and a call kept in a name are not."""
    code = """
    import torch
    model = torch.nn.Linear(2, 2)
    x = torch.randn(3, 2)
    x.detach()
    x.view(6)
    x - model(x)
    model.to("cpu")
    x.add_(1)
    seen = set()
    seen.add(3)
    y = x * 2
    y.float()
    model.float()
    print(x.mean())
    logger.log(x)
    """
    assert [(h[0], h[1], h[2]) for h in hits(code) if h[0] == "result-thrown-away"] == [
        ("result-thrown-away", 5, "x"), ("result-thrown-away", 6, "x"),
        ("result-thrown-away", 7, "x"), ("result-thrown-away", 13, "y")]


def test_reading_grad_of_a_non_leaf() -> None:
    code = """
    import torch
    w = torch.randn(3, requires_grad=True) * 0.01
    loss = (w ** 2).sum()
    loss.backward()
    print(w.grad)
    """
    assert hits(code) == [("nonleaf-grad-read", 6, "w")]


@pytest.mark.parametrize(
    "make",
    [
        "w = torch.randn(3, requires_grad=True)",
        "w = (torch.randn(3) * 0.01).requires_grad_()",
        "w = torch.randn(3).mul(0.01).detach().requires_grad_(True)",
        "w = torch.randn(3, requires_grad=True) * 0.01\nw.retain_grad()",
    ],
)
def test_leaves_and_retained_grads_are_fine(make: str) -> None:
    code = f"import torch\n{make}\nloss = (w ** 2).sum()\nloss.backward()\nprint(w.grad)\n"
    assert hits(code) == []


def test_backward_inside_no_grad() -> None:
    code = """
    import torch
    w = torch.ones(2, requires_grad=True)
    loss = (w * 3).sum()
    with torch.no_grad():
        loss.backward()
    """
    assert hits(code) == [("backward-in-no-grad", 6, "loss")]


def test_requires_grad_turned_on_after_use() -> None:
    code = """
    import torch
    x = torch.tensor([1.0, 2.0])
    y = x * 3
    x.requires_grad = True
    y.sum().backward()
    """
    assert hits(code) == [("requires-grad-too-late", 5, "x")]


@pytest.mark.parametrize(
    "code",
    [
        # flag set before the operations
        "import torch\nx = torch.ones(2)\nx.requires_grad_()\ny = x * 3\ny.sum().backward()\n",
        # result recomputed after the flag is on
        "import torch\nx = torch.ones(2)\ny = x * 3\nx.requires_grad_()\ny = x * 3\n"
        "y.sum().backward()\n",
        # turning it off is not this mistake
        "import torch\nx = torch.ones(2)\ny = x * 3\nx.requires_grad_(False)\nprint(y)\n",
    ],
)
def test_requires_grad_in_time_is_fine(code: str) -> None:
    assert hits(code) == []


def test_unparsable_code_has_no_pitfalls() -> None:
    assert find_pitfalls("for i in range(3)\n    pass\n") == []


def test_pitfall_text_names_the_learners_variable_in_both_languages() -> None:
    (diagnosis,) = find_pitfalls(textwrap.dedent(LOOP_WITHOUT_ZERO))
    assert diagnosis.severity == "pitfall"
    assert "line 7" in diagnosis.explanation.en and "第 7 行" in diagnosis.explanation.zh
    assert diagnosis.lesson_ref == "accumulation/forgot-zero"


def test_recording_gradients_in_a_loop_without_clearing() -> None:
    code = """
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    grads = []
    for scale in [1.0, 2.0]:
        (scale * x ** 2).sum().backward()
        grads.append(x.grad.clone())
    """
    assert [h[0] for h in hits(code)] == ["missing-zero-grad"]


def test_printing_gradients_to_show_accumulation_is_not_flagged() -> None:
    code = """
    import torch
    x = torch.tensor(1.0, requires_grad=True)
    y = x * x
    for i in range(3):
        y.backward(retain_graph=True)
        print(i, x.grad)
    """
    assert hits(code) == []


BEST_STATE = """
import torch
net = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
best, best_state = 1e9, None
for epoch in range(5):
    loss = net(torch.ones(4, 2)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() < best:
        best = loss.item()
        best_state = net.state_dict()
net.load_state_dict(best_state)
"""


def test_a_state_dict_kept_while_training_goes_on_is_the_live_weights() -> None:
    assert hits(BEST_STATE) == [("state-dict-kept-by-reference", 13, "best_state")]
    # a shallow copy of the dict still holds the same tensors
    shallow = BEST_STATE.replace("net.state_dict()", "dict(net.state_dict())")
    assert hits(shallow) == [("state-dict-kept-by-reference", 13, "best_state")]
    # the weights before training, kept to reset the network after it
    reset = """
    import torch
    net = torch.nn.Linear(2, 1)
    init = net.state_dict()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        net(torch.ones(1, 2)).sum().backward()
        opt.step()
    net.load_state_dict(init)
    """
    assert hits(reset) == [("state-dict-kept-by-reference", 4, "init")]


@pytest.mark.parametrize("written_right", [
    "best_state = copy.deepcopy(net.state_dict())",
    "best_state = {k: v.clone() for k, v in net.state_dict().items()}",
    # saved at once: torch.save writes the values of that moment
    "best_state = net.state_dict()\n        torch.save(best_state, buffer)",
])
def test_a_snapshot_or_an_immediate_save_of_the_state_dict_is_quiet(written_right: str) -> None:
    code = BEST_STATE.replace("best_state = net.state_dict()", written_right)
    if "torch.save" in written_right:
        code = code.replace("net.load_state_dict(best_state)\n", "")
    assert "state-dict-kept-by-reference" not in [h[0] for h in hits(code)]


def test_a_state_dict_with_no_optimizer_step_after_it_is_quiet() -> None:
    code = """
    import torch
    net = torch.nn.Linear(2, 1)
    other = torch.nn.Linear(2, 1)
    state = net.state_dict()
    other.load_state_dict(state)
    """
    assert hits(code) == []


def test_only_the_mean_divided_by_the_std_is_a_precedence_slip() -> None:
    code = """
    import torch
    x = torch.rand(5)
    mean, std = x.mean(), x.std()
    y = x - mean / std
    z = x - x.min() / (x.max() - x.min())
    image = x.float() - 127.5 / 128.0
    """
    assert hits(code) == [("normalize-precedence", 5, "x"), ("normalize-precedence", 6, "x"),
                          ("normalize-precedence", 7, "x.float()")]
    right = """
    import torch
    x = torch.rand(5)
    mean, std = x.mean(), x.std()
    y = (x - mean) / std
    w = x - lr / 2
    v = (x - 0.1307) / 0.3081
    third = x - 1 / 3
    u = x - mult / scale
    """
    assert hits(right) == []
