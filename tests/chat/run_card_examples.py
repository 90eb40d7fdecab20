"""Runs the answer cards' examples (a JSON object id -> code on stdin) and checks what each
``print(...)  # OUTPUT`` line prints. Prints one line per failure, then the number of claims
checked; exits 1 when anything failed. Run by tests/chat/test_cards.py in a fresh process."""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import re
import sys
import tokenize


def claims(code: str) -> dict[int, str]:
    """Line -> the output its print's trailing comment claims."""
    out: dict[int, str] = {}
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.COMMENT:
            continue
        line = tok.start[0]
        on_line = [t for t in tokens[:i] if t.start[0] == line and t.type != tokenize.NL]
        names = [t.string for t in on_line if t.type == tokenize.NAME]
        if names[:1] == ["print"]:
            out[line] = tok.string[1:].strip()
    return out


def matches(claim: str, printed: str) -> bool:
    def squash(text: str) -> str:
        return re.sub(r"\s+", "", text)

    pattern = ".*".join(re.escape(part) for part in squash(claim).split("..."))
    return re.fullmatch(pattern, squash(printed), re.DOTALL) is not None


def run(name: str, code: str) -> tuple[list[str], int]:
    printed: dict[int, list[str]] = {}

    def recording_print(*args: object, **kwargs: object) -> None:
        frame = sys._getframe(1)
        buffer = io.StringIO()
        builtins.print(*args, file=buffer, end="")
        if frame.f_code.co_filename == name:
            printed.setdefault(frame.f_lineno, []).append(buffer.getvalue())

    failures = []
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, name, "exec"), {"__name__": "__main__", "print": recording_print})
    except Exception as error:
        return [f"{name}: {type(error).__name__}: {error}"], 0
    expected = claims(code)
    for line, claim in expected.items():
        got = printed.get(line)
        if not got:
            failures.append(f"{name}: line {line} never printed (claims {claim!r})")
        elif not all(matches(claim, one) for one in got):
            failures.append(f"{name}: line {line} printed {' | '.join(got)!r}, claims {claim!r}")
    return failures, len(expected)


def main() -> int:
    examples = json.load(sys.stdin)
    failures: list[str] = []
    checked = 0
    for name, code in examples.items():
        failed, n = run(name, code)
        failures.extend(failed)
        checked += n
    print("\n".join(failures))
    print(checked)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
