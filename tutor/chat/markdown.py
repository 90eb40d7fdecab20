"""Just enough Markdown structure for passages: blocks that never cut a code fence."""

from __future__ import annotations


def blocks(text: str) -> list[str]:
    """Paragraphs, headings and whole fenced code blocks, in order."""
    out: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current and any(line.strip() for line in current):
            out.append("\n".join(current).strip("\n"))
        current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if not in_fence:
                flush()
                current.append(line)
                in_fence = True
            else:
                current.append(line)
                in_fence = False
                flush()
            continue
        if in_fence:
            current.append(line)
        elif not stripped:
            flush()
        elif stripped.startswith("#"):
            flush()
            out.append(stripped)
        else:
            current.append(line)
    flush()
    return out


def is_code(block: str) -> bool:
    return block.lstrip().startswith("```")


def is_heading(block: str) -> bool:
    return block.startswith("#")


def sections(text: str, limit: int) -> list[str]:
    """``text`` cut at headings into pieces of about ``limit`` characters (or one piece)."""
    if len(text) <= limit:
        return [text]
    pieces: list[list[str]] = [[]]
    for block in blocks(text):
        size = sum(len(b) for b in pieces[-1])
        if is_heading(block) and pieces[-1] and size + len(block) > limit // 3:
            pieces.append([])
        pieces[-1].append(block)
    return ["\n\n".join(p) for p in pieces if p]


def summary(text: str, limit: int, *, max_code_lines: int = 8) -> str:
    """The first blocks of ``text`` up to ``limit`` characters; short code blocks are kept,
    long ones and headings dropped; stops before a block that would not fit."""
    out: list[str] = []
    size = 0
    for block in blocks(text):
        if is_heading(block):
            continue
        if is_code(block) and block.count("\n") - 1 > max_code_lines:
            continue
        if out and size + len(block) > limit:
            break
        out.append(block)
        size += len(block)
    return "\n\n".join(out)
