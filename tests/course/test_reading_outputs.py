"""Every output a reading shows is what torch prints: each ```python block of a reading is run
(the blocks of one reading in order, in one namespace), and the output it claims is compared:
the ```text block right after it, and ``print(...)  # tensor(...)`` comments on its lines."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from dataclasses import dataclass

import pytest

from tutor.course import load_course
from tutor.course.models import ReadingStep

_BLOCK = re.compile(r"^[ \t]*```(\w*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_CLAIMED = re.compile(r"^(?P<indent>\s*)(?P<code>\S.*?)\s+#\s*"
                      r"(?P<claim>(tensor\(|torch\.Size|True|False|None|\(|-?\d).*)$")
"""``x.grad   # tensor([4., 4.])  - added``, ``print(y)  # tensor(...)``, ``z = x + 2  # ...``:
a line whose comment starts with a value is a claim about what that line's value prints as."""
_SEPARATORS = (" ", ":", "：", "-", "—", "=", "(", "（")


@dataclass
class Claim:
    ref: str
    lang: str
    code: str
    text: str | None
    """The ```text block after the code, if any."""


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


def _claims() -> list[tuple[str, str, list[Claim]]]:
    found = []
    for ref, lang, blocks in _readings():
        claims = []
        for number, (kind, code) in enumerate(blocks):
            if kind != "python":
                continue
            after = blocks[number + 1] if number + 1 < len(blocks) else None
            text = after[1] if after is not None and after[0] == "text" else None
            claims.append(Claim(ref, lang, code, text))
        if any(c.text is not None or _printed_claims(c.code)[1] for c in claims):
            found.append((ref, lang, claims))
    return found



def _run(code: str, namespace: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, "<reading>", "exec"), namespace)
        except Exception as exc:  # a block may show an error: its text block holds it
            print(f"{type(exc).__name__}: {exc}")
    return out.getvalue()


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


def _printed_claims(code: str) -> tuple[str, list[str]]:
    """The block with each claimed line's value recorded in ``__claims__``, and the claims."""
    claims = []
    lines = []
    for line in code.splitlines():
        match = _CLAIMED.match(line)
        value = _value_of(match.group("code")) if match else None
        lines.append(line)
        if match and value is not None:
            claims.append(match.group("claim").strip())
            lines.append(f"{match.group('indent')}__claims__.append({value})")
    return "\n".join(lines), claims


_ADDRESS = re.compile(r" object at 0x[0-9a-f]+")


def _shows(printed: str, claim: str) -> bool:
    """A claim is the printed value, maybe followed by a note (``tensor([4., 4.])  - added``);
    a node's address, which changes from run to run, is left out (``<MulBackward0>``)."""
    printed = _ADDRESS.sub("", printed)
    return claim == printed or (claim.startswith(printed) and claim[len(printed)].startswith(
        _SEPARATORS))


CLAIMS = _claims()


def test_some_readings_claim_outputs() -> None:
    assert len(CLAIMS) >= 20
    assert sum(1 for _, _, cs in CLAIMS for c in cs if c.text is not None) >= 14
    assert sum(len(_printed_claims(c.code)[1]) for _, _, cs in CLAIMS for c in cs) >= 20


@pytest.mark.parametrize(("ref", "lang", "claims"), CLAIMS,
                         ids=[f"{r}-{la}" for r, la, _ in CLAIMS])
def test_reading_output_is_what_torch_prints(ref: str, lang: str, claims: list[Claim]) -> None:
    import torch

    torch.manual_seed(0)
    namespace: dict = {"torch": torch, "__claims__": []}
    for claim in claims:
        code, printed = _printed_claims(claim.code)
        namespace["__claims__"] = values = []
        out = _run(code, namespace)
        if claim.text is not None:
            got = [line.rstrip() for line in out.rstrip().splitlines()]
            want = [line.rstrip() for line in claim.text.rstrip().splitlines()]
            assert got == want, f"{ref} ({lang}):\n{claim.code}"
        assert len(values) == len(printed), f"{ref} ({lang}): a claimed line did not run\n{out}"
        for value, said in zip(values, printed, strict=True):
            assert _shows(value, said), f"{ref} ({lang}): torch shows {value!r}, the text {said!r}"
