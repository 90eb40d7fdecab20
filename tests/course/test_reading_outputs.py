"""Every output, value and error message the lessons show is what torch gives.

- Readings: each ```python block of a reading is run (the blocks of one reading in order, in
  one namespace), and what it claims is compared: the ```text block right after it, and the
  claims its comments make (:func:`_comment_claim` lists the forms).
- Every comment in a reading's code that states a value is such a claim, or prose listed in
  :data:`PROSE_COMMENTS`: a new value-like comment cannot go unchecked.
- Every error message quoted anywhere in the lessons' text (readings, prompts, choices,
  explanations, hints) is the start of the message that one of :data:`TORCH_MESSAGES` makes
  torch raise, and of its type where the text names one. The CUDA device mismatch, which no
  CPU machine can raise, is rebuilt from the format strings in torch's own library.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tutor.course import load_course
from tutor.course.models import AnswerStep, ReadingStep
from tutor.i18n import Text

_BLOCK = re.compile(r"^[ \t]*```(\w*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_COMMENTED = re.compile(r"^(?P<indent>\s*)(?P<code>\S.*?)\s+#\s*(?P<comment>.*)$")
_COMMENT_ONLY = re.compile(r"^\s*#\s*(?P<comment>.*)$")
_VALUE_FIRST = re.compile(r"^(tensor\(|torch\.Size|True|False|None|\(|-?\d)")
_ARROW = re.compile(r"^(?P<expr>[\w.()\[\]]+) -> (?P<said>.+)$")
_NUMBER = re.compile(r"^(?P<name>\w+) = (?P<number>-?\d+(\.\d+)?)$")
_ERROR = re.compile(r"^(?P<type>[A-Z]\w*(Error|Warning)): (?P<message>.+)$")
_SEPARATORS = (" ", ":", "：", "-", "—", "=", "(", "（", ",", "，")


PROSE_COMMENTS = {
    "dy/dx = 2 * x": "the derivative as a formula; the next lines print its value",
    "d/da = b = 5,  d/db = a + 1 = 3": "the partial derivatives worked out; `a.grad, b.grad` "
                                       "below claims the values",
    "1 input image channel, 6 output channels, 5x5 square convolution":
        "the source text's own comment on conv1",
    "out is (1, 10): give a gradient (lesson 5)": "`forward` is the exercise's here (the "
                                                   "block cannot run); nn-module/forward "
                                                   "checks that shape",
    "out 的形状是 (1, 10)，要传 gradient（第 5 课）": "the same, in Chinese",
}
"""Comments in readings' code that hold numbers but state no value a test could read back,
each with the reason; :func:`test_every_value_a_reading_comment_states_is_checked` keeps
any other value-like comment from going unchecked."""


# ------------------------------------------------------------------ readings


@dataclass
class Block:
    ref: str
    lang: str
    code: str
    text: str | None
    """The ```text block after the code, if any."""


@dataclass(frozen=True)
class CommentClaim:
    """What a comment in a reading's code says: ``kind`` tells how ``said`` is compared."""

    kind: str  # value | number | error
    said: str
    probe: str | None = None
    """Python expression whose value the claim is about (recorded after its line)."""


def _dedent(block: str) -> str:
    lines = block.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def _readings() -> list[tuple[str, str, list[tuple[str, str]]]]:
    out = []
    for lesson in load_course().lessons:
        for step in lesson.steps:
            if isinstance(step, ReadingStep):
                for lang in ("en", "zh"):
                    body = step.body.get(lang)
                    blocks = [(m.group(1), _dedent(m.group(2))) for m in _BLOCK.finditer(body)]
                    out.append((f"{lesson.id}/{step.id}", lang, blocks))
    return out


def _value_of(code: str) -> str | None:
    """The expression whose value a claimed line shows (None: not a claim we can check)."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    if isinstance(node, ast.Expr):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and (
            call.func.id == "print") and not call.keywords:
            return "' '.join(map(str, (" + ", ".join(ast.unparse(a) for a in call.args) + ",)))"
        return f"str({ast.unparse(call)})"
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
        node.targets[0], ast.Name
    ):
        return f"str({node.targets[0].id})"
    return None


def _comment_claim(code: str, comment: str) -> CommentClaim | None:
    """The claim a comment on ``code`` makes, in one of these forms (None: no claim):

    - ``x.grad  # tensor([4., 4.])  - added``: the line's value, maybe followed by a note;
    - ``b = a * 3  # b.grad_fn -> <MulBackward0>``: an expression's value after the line;
    - ``y = x ** 2  # y = 9``: the number the line assigns.
    """
    if comment in PROSE_COMMENTS:
        return None
    if _VALUE_FIRST.match(comment):
        value = _value_of(code)
        return CommentClaim("value", comment, value) if value is not None else None
    if arrow := _ARROW.match(comment):
        return CommentClaim("value", arrow["said"], f"str({arrow['expr']})")
    if (number := _NUMBER.match(comment)) and re.match(rf"{number['name']}\s*=", code):
        return CommentClaim("number", number["number"], f"float({number['name']})")
    return None


def _instrumented(code: str) -> tuple[str, list[CommentClaim]]:
    """The block with each claim's probe recorded in ``__claims__`` after its line, and the
    claims (an error claim, a comment line ``# RuntimeError: ...``, is about the block)."""
    claims: list[CommentClaim] = []
    lines = []
    for line in code.splitlines():
        lines.append(line)
        alone = _COMMENT_ONLY.match(line)
        if alone:
            error = _ERROR.match(alone["comment"])
            if error:
                claims.append(CommentClaim("error", alone["comment"]))
            continue
        match = _COMMENTED.match(line)
        claim = _comment_claim(match["code"], match["comment"]) if match else None
        if match and claim is not None:
            claims.append(claim)
            lines.append(f"{match['indent']}__claims__.append({claim.probe})")
    return "\n".join(lines), claims


def _blocks_with_claims() -> list[tuple[str, str, list[Block]]]:
    found = []
    for ref, lang, blocks in _readings():
        runs = []
        for number, (kind, code) in enumerate(blocks):
            if kind != "python":
                continue
            after = blocks[number + 1] if number + 1 < len(blocks) else None
            text = after[1] if after is not None and after[0] == "text" else None
            runs.append(Block(ref, lang, code, text))
        if any(b.text is not None or _instrumented(b.code)[1] for b in runs):
            found.append((ref, lang, runs))
    return found


def _run(code: str, namespace: dict) -> tuple[str, BaseException | None]:
    out = io.StringIO()
    raised = None
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(code, "<reading>", "exec"), namespace)
        except Exception as exc:  # a block may show an error: its text block holds it
            print(f"{type(exc).__name__}: {exc}")
            raised = exc
    return out.getvalue(), raised


_ADDRESS = re.compile(r" object at 0x[0-9a-f]+")


def _shows(printed: str, claim: str) -> bool:
    """A claim is the printed value, maybe followed by a note (``tensor([4., 4.])  - added``);
    a node's address, which changes from run to run, is left out (``<MulBackward0>``)."""
    printed = _ADDRESS.sub("", printed)
    return claim == printed or (claim.startswith(printed) and claim[len(printed)].startswith(
        _SEPARATORS))


def _agrees(claim: CommentClaim, value: object) -> bool:
    if claim.kind == "number":
        return isinstance(value, float) and math.isclose(value, float(claim.said), rel_tol=1e-6)
    return isinstance(value, str) and _shows(value, claim.said)


CLAIMS = _blocks_with_claims()


def test_some_readings_claim_outputs() -> None:
    assert len(CLAIMS) >= 20
    assert sum(1 for _, _, bs in CLAIMS for b in bs if b.text is not None) >= 14
    kinds = [c.kind for _, _, bs in CLAIMS for b in bs for c in _instrumented(b.code)[1]]
    assert len(kinds) >= 30 and {"value", "number", "error"} <= set(kinds)


@pytest.mark.parametrize(("ref", "lang", "blocks"), CLAIMS,
                         ids=[f"{r}-{la}" for r, la, _ in CLAIMS])
def test_reading_output_is_what_torch_prints(ref: str, lang: str, blocks: list[Block]) -> None:
    import torch

    torch.manual_seed(0)
    namespace: dict = {"torch": torch, "__claims__": []}
    for block in blocks:
        code, claims = _instrumented(block.code)
        namespace["__claims__"] = values = []
        out, raised = _run(code, namespace)
        if block.text is not None:
            got = [line.rstrip() for line in out.rstrip().splitlines()]
            want = [line.rstrip() for line in block.text.rstrip().splitlines()]
            assert got == want, f"{ref} ({lang}):\n{block.code}"
        errors = [c for c in claims if c.kind == "error"]
        if errors:
            assert raised is not None, f"{ref} ({lang}): the block was said to raise\n{code}"
            for claim in errors:
                assert _quote_matches(claim.said, raised), (ref, lang, claim.said, raised)
        elif block.text is None:
            assert raised is None, f"{ref} ({lang}): {raised!r}\n{code}"
        probed = [c for c in claims if c.kind != "error"]
        assert len(values) == len(probed), f"{ref} ({lang}): a claimed line did not run\n{out}"
        for value, claim in zip(values, probed, strict=True):
            assert _agrees(claim, value), f"{ref} ({lang}): torch gives {value!r}, the text " \
                                          f"{claim.said!r}"


_LESSON_REFERENCE = re.compile(r"\(lesson \d+\)|（第 \d+ 课）")
_VALUE_LIKE = re.compile(r"tensor\(|<\w+>|\b(True|False|None)\b|\d|Error|shape|形状")


def _reading_comments() -> Iterator[tuple[str, str, str, str]]:
    for ref, lang, blocks in _readings():
        for kind, code in blocks:
            if kind != "python":
                continue
            for line in code.splitlines():
                match = _COMMENTED.match(line) or _COMMENT_ONLY.match(line)
                if match:
                    yield ref, lang, match.groupdict().get("code") or "", match["comment"]


def test_every_value_a_reading_comment_states_is_checked() -> None:
    unchecked = []
    prose_seen = set()
    for ref, lang, code, comment in _reading_comments():
        if comment in PROSE_COMMENTS:
            prose_seen.add(comment)
            continue
        claimed = _ERROR.match(comment) if not code else _comment_claim(code, comment)
        if claimed is None and _VALUE_LIKE.search(_LESSON_REFERENCE.sub("", comment)):
            unchecked.append(f"{ref} ({lang}): {code}  # {comment}")
    assert unchecked == [], "value-like comments no test checks:\n" + "\n".join(unchecked)
    assert prose_seen == set(PROSE_COMMENTS), "prose comments no reading has any more"


# ------------------------------------------------------------------ quoted error messages

_TYPED = re.compile(r"\b(?P<type>[A-Z]\w*(?:Error|Warning)):\s*(?P<message>.+?)"
                    r"(?=`|\*?\"|\*$|\n\n|$)", re.S)
_ITALIC_QUOTE = re.compile(r"\*\"(?P<message>[^\"]+)\"\*")
_RAISES_QUOTE = re.compile(
    r"(?:raises?|fails? with|报错?|抛出)(?:\s+(?:a|an|the))?[\s:：]*\"(?P<message>[^\"]+)\"")
"""A message in plain quotes after the verb that raises it (other plain quotes are prose)."""
_TABLE_CELL = re.compile(r"^\|\s*`(?P<message>[^`]+)`\s*\|", re.M)
_FAILS_WITH = re.compile(r"\b(?:fails with|报)\s*`(?P<message>[^`]+)`")
_INLINE_CODE = re.compile(r"`[^`]*`")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*")
_PLACEHOLDER = re.compile(r"\b[A-D]x[A-D]\b")
"""``(AxB and CxD)``: sizes written as letters stand for any numbers."""


@dataclass(frozen=True)
class Quote:
    message: str
    type: str | None
    where: str


def _texts() -> Iterator[tuple[str, Text]]:
    for lesson in load_course().lessons:
        for step in lesson.steps:
            ref = f"{lesson.id}/{step.id}"
            yield f"{ref}.title", step.title
            for name in ("body", "prompt"):
                value = getattr(step, name, None)
                if isinstance(value, Text):
                    yield f"{ref}.{name}", value
            for number, hint in enumerate(step.hints):
                yield f"{ref}.hints[{number}]", hint
            for number, choice in enumerate(getattr(step, "choices", None) or []):
                yield f"{ref}.choices[{number}].text", choice.text
                yield f"{ref}.choices[{number}].explanation", choice.explanation
            if isinstance(step, AnswerStep):
                yield f"{ref}.code", Text(en=step.code, zh=step.code)


def _quotes_in(text: str, where: str) -> Iterator[Quote]:
    """Error messages quoted in ``text``: after an exception's name (in prose or a code
    comment), in italic quotes, in plain quotes or backticks after the verb that raises
    them, or in the first cell of a table row (lesson 12's table of messages)."""
    prose = _BLOCK.sub("", text)
    for match in _TYPED.finditer(text):
        yield Quote(match["message"], match["type"], where)
    for pattern in (_TABLE_CELL, _FAILS_WITH):
        for match in pattern.finditer(prose):
            yield Quote(match["message"], None, where)
    plain = _INLINE_CODE.sub("", prose)
    for pattern in (_ITALIC_QUOTE, _RAISES_QUOTE):
        for match in pattern.finditer(plain):
            yield Quote(match["message"], None, where)


def _message_like(message: str) -> bool:
    return len(re.findall(r"[A-Za-z]+", message)) >= 3 and not _CJK.search(message)


def _quotes() -> list[Quote]:
    found: dict[tuple[str, str | None], Quote] = {}
    for where, text in _texts():
        for lang in ("en", "zh"):
            for quote in _quotes_in(text.get(lang), f"{where}.{lang}"):
                message = " ".join(quote.message.split()).rstrip("`")
                if _message_like(message):
                    found.setdefault((message, quote.type),
                                     Quote(message, quote.type, quote.where))
    return list(found.values())


def _pattern(quote: str) -> re.Pattern[str]:
    """A quote as a pattern of the message it starts: ``…`` stands for any text."""
    parts = [_PLACEHOLDER.sub(r"\\d+x\\d+", re.escape(part))
             for part in _ELLIPSIS.split(quote.rstrip(" .…"))]
    return re.compile(r"\s*.*?\s*".join(parts), re.S)


def _quote_matches(quote: str, raised: BaseException) -> bool:
    error = _ERROR.match(quote)
    if error is not None and error["type"] != type(raised).__name__:
        return False
    message = error["message"] if error is not None else quote
    return _pattern(message).match(str(raised)) is not None


_MY_SIGMOID = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 + y)


torch.autograd.gradcheck(MySigmoid.apply, (torch.tensor([-1., 0.3, 2.], dtype=torch.float64,
                                                        requires_grad=True),))
"""

TORCH_MESSAGES = {
    "backward of a non-scalar": "x = torch.ones(2, requires_grad=True)\n(x + 2).backward()\n",
    "nothing tracked": "torch.ones(2).sum().backward()\n",
    "graph freed": "x = torch.ones(2, requires_grad=True)\nloss = x.exp().sum()\n"
                   "loss.backward()\nloss.backward()\n",
    "in-place on a leaf": "torch.ones(3, requires_grad=True).mul_(0.5)\n",
    "saved value changed in place": "x = torch.ones(2, requires_grad=True)\ny = torch.exp(x)\n"
                                    "y += 1\ny.sum().backward()\n",
    "numpy of a tracked tensor": "torch.ones(2, requires_grad=True).numpy()\n",
    "integer tensor": "torch.tensor([1, 2, 3], requires_grad=True)\n",
    "in_features mismatch": "torch.nn.Linear(16 * 6 * 6, 120)(torch.randn(1, 400))\n",
    "unknown device type": "torch.device('gpu')\n",
    "a non-leaf's .grad used": "w = torch.ones(3, requires_grad=True)\ns = w * 10\n"
                               "(s ** 2).sum().backward()\ns.grad * 2\n",
    "gradient of the wrong shape": "(torch.ones(3, requires_grad=True) * 2)"
                                   ".backward(torch.ones(1))\n",
    "NaN in anomaly mode": "x = torch.tensor([0., 1., 2.], requires_grad=True)\n"
                           "with torch.autograd.detect_anomaly():\n"
                           "    y = torch.where(x > 0, x.log(), torch.zeros_like(x))\n"
                           "    y.sum().backward()\n",
    "gradcheck of a wrong backward": _MY_SIGMOID,
}
"""Programs that make torch (or Python, for a ``None`` used as a number) raise each message
the lessons quote; the CUDA device mismatch is :func:`device_mismatch_error`."""


def _raised(code: str) -> BaseException:
    import torch

    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            exec(compile(code, "<producer>", "exec"), {"torch": torch})
        except Exception as exc:
            return exc
    raise AssertionError(f"expected an error from:\n{code}")


_LIBRARY_FRAGMENTS = (
    "Expected all tensors to be on the same device, but got ",
    " is on ",
    ", different from other tensors on ",
    " (when checking argument in method ",
)
"""The pieces of the message of ``c10::impl::common_device_check_failure``, the check that
generated kernels of devices with a device guard (CUDA) run on every tensor argument."""


def _library() -> Path | None:
    import torch

    found = sorted(Path(torch.__file__).parent.glob("lib/libtorch_cpu.*"))
    return found[0] if found else None


@cache
def device_mismatch_error() -> BaseException:
    """The error of ``nn.Linear`` on ``cuda:0`` called on a CPU batch, as torch raises it.

    On a CUDA machine it is raised. Elsewhere it is rebuilt: ``F.linear`` on a 2-D input with
    a bias calls ``addmm(bias, input, weight.t())`` (seen below through a dispatch mode);
    the generated CUDA kernel ``wrapper_CUDA_addmm`` (the CPU build has its twin
    ``wrapper_CPU_addmm``, which checks no devices and so names itself nowhere else) checks
    ``self``, ``mat1``, ``mat2`` in that order, so the bias sets the common device and the
    CPU batch ``mat1`` fails; the words are the format strings found, each whole, in the
    installed libtorch.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    if torch.cuda.is_available():
        model = torch.nn.Linear(3, 1).to("cuda:0")
        return _raised_by(lambda: model(torch.ones(2, 3)))
    library = _library()
    if library is None:
        pytest.skip("no libtorch_cpu in this torch install: the CUDA message cannot be read")
    data = library.read_bytes()
    for fragment in _LIBRARY_FRAGMENTS:
        assert b"\0" + fragment.encode() + b"\0" in data, fragment
    assert b"17wrapper_CPU_addmm" in data  # the kernel's C++ name (length-prefixed, mangled)

    called: list[str] = []

    class Calls(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            called.append(str(func))
            return func(*args, **(kwargs or {}))

    with Calls():
        torch.nn.Linear(3, 1)(torch.ones(2, 3))
    assert "aten.addmm.default" in called, called
    arguments = [a.name for a in torch.ops.aten.addmm.default._schema.arguments]
    assert arguments[:3] == ["self", "mat1", "mat2"]
    start, is_on, other, method = _LIBRARY_FRAGMENTS
    return RuntimeError(f"{start}mat1{is_on}cpu{other}cuda:0{method}wrapper_CUDA_addmm)")


def _raised_by(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except Exception as exc:
        return exc
    raise AssertionError("no error")


@cache
def _produced() -> dict[str, BaseException]:
    made = {name: _raised(code) for name, code in TORCH_MESSAGES.items()}
    made["device mismatch on CUDA"] = device_mismatch_error()
    return made


QUOTES = _quotes()


def test_the_lessons_quote_many_messages() -> None:
    assert len(QUOTES) >= 20
    assert any("wrapper_CUDA_addmm" in q.message for q in QUOTES)


@pytest.mark.parametrize("quote", QUOTES, ids=[q.message[:50] for q in QUOTES])
def test_a_quoted_error_message_is_torchs(quote: Quote) -> None:
    said = f"{quote.type}: {quote.message}" if quote.type else quote.message
    matching = [name for name, raised in _produced().items() if _quote_matches(said, raised)]
    assert matching, (
        f"{quote.where} quotes {said!r}, which no program in TORCH_MESSAGES makes torch "
        "raise: add the program that raises it (or correct the quote)")


def test_every_message_program_is_quoted_somewhere() -> None:
    unused = [name for name, raised in _produced().items()
              if not any(_quote_matches(f"{q.type}: {q.message}" if q.type else q.message,
                                        raised) for q in QUOTES)]
    assert unused == []


def test_the_device_lesson_quotes_torchs_cuda_mismatch_word_for_word() -> None:
    """Issue 21 §5: the mismatch quiz quotes the message torch 2.13 gives for a model on
    cuda:0 called on a CPU batch, in both languages."""
    step = load_course().find("devices/mismatch")[1]
    message = str(device_mismatch_error())
    for lang in ("en", "zh"):
        assert f'"{message}"' in step.prompt.get(lang), lang  # type: ignore[union-attr]


def test_a_quote_is_matched_from_its_start_and_by_its_type() -> None:
    error = _raised(TORCH_MESSAGES["graph freed"])
    assert _quote_matches("Trying to backward through the graph a second time … "
                          "Specify retain_graph=True …", error)
    assert _quote_matches("RuntimeError: Trying to backward through the graph", error)
    assert not _quote_matches("TypeError: Trying to backward through the graph", error)
    assert not _quote_matches("backward through the graph a second time", error)
    assert not _quote_matches("Trying to backward through the graph a third time", error)
    shapes = _raised(TORCH_MESSAGES["in_features mismatch"])
    assert _quote_matches("mat1 and mat2 shapes cannot be multiplied (AxB and CxD)", shapes)
    assert not _quote_matches("mat1 and mat2 shapes cannot be multiplied (AxB)", shapes)
