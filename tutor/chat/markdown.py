"""Just enough Markdown structure for passages: blocks that never cut a code fence."""

from __future__ import annotations

import re
from collections.abc import Callable

from tutor.cjk import UNSPACED
from tutor.markdown_fences import fenced_pieces


def blocks(text: str) -> list[str]:
    """Paragraphs, headings and whole fenced code blocks, in order."""
    out: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current and any(line.strip() for line in current):
            out.append("\n".join(current).strip("\n"))
        current.clear()

    for piece in fenced_pieces(text):
        if piece.code is not None:
            flush()
            out.append(piece.source.strip("\n"))
            continue
        for line in piece.source.splitlines():
            stripped = line.strip()
            if not stripped:
                flush()
            elif stripped.startswith("#"):
                flush()
                out.append(stripped)
            else:
                current.append(line)
    flush()
    return out


def is_code(block: str) -> bool:
    return block.lstrip().startswith(("```", "~~~"))


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


def summary(
    text: str,
    limit: int,
    *,
    max_code_lines: int = 8,
    relevance: Callable[[str], float] | None = None,
) -> str:
    """About ``limit`` characters of ``text``, in its own order, without headings or long code.

    Without ``relevance`` the first blocks are taken; with it (a score per block, e.g. how
    many of the question's terms a block has) the most relevant blocks are, so a long
    passage answers with the part that is about the question.
    """
    candidates = [
        (i, b)
        for i, b in enumerate(blocks(text))
        if not is_heading(b) and not (is_code(b) and b.count("\n") - 1 > max_code_lines)
    ]
    if relevance is not None:
        # prose explains; code only illustrates, so it counts half
        scored = [(relevance(b) * (0.5 if is_code(b) else 1.0), i, b) for i, b in candidates]
        if any(score > 0 for score, _, _ in scored):
            order = sorted(scored, key=lambda t: (-t[0], t[1]))
            candidates = [(i, b) for score, i, b in order if score > 0]
    chosen: list[tuple[int, str]] = []
    size = 0
    for i, block in candidates:
        if chosen and size + len(block) > limit:
            break
        chosen.append((i, block))
        size += len(block)
    kept = {i for i, _ in chosen}
    shown = [b if i + 1 in kept else _without_lead_in(b) for i, b in sorted(chosen)]
    if not any(shown):  # it was all lead-in: its colon ends it, rather than nothing at all
        shown = [re.sub(r"[:：]\s*$", lambda m: "。" if "：" in m.group(0) else ".", b)
                 for _, b in sorted(chosen)]
    return "\n\n".join(b for b in shown if b)


_SENTENCE_END_RE = re.compile(r"[.!?。！？](?=\s|$)|[。！？]|\n(?=[ \t]*(?:[-*+]|\d+[.)])[ \t])")
"""Where a sentence ends: its full stop, or the line break before a list item. A line break
inside a paragraph is not one (lessons wrap their prose): cutting there left half a
sentence ("today `torch.autograd.Function` is the base")."""


def _without_lead_in(block: str) -> str:
    """A paragraph that ended by introducing what came after it ("The ways to clear it
    are:", "清零的办法有："), without that sentence now that what it introduced is not
    shown: turning its colon into a full stop left a fragment ("清零的办法有。")."""
    if is_code(block):
        return block
    stripped = block.rstrip()
    if not stripped.endswith((":", "：")):
        return block
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(stripped[:-1])]
    return stripped[: ends[-1]].rstrip() if ends else ""


_CJK_GAP_RE = re.compile(f"(?<=[{UNSPACED}])[ \t]+(?=[{UNSPACED}])")
"""Spaces between two Chinese characters or punctuation marks: what folding a YAML line
break into a space leaves inside Chinese text (Chinese puts no space between words)."""


def tidy_chinese(text: str) -> str:
    """``text`` without spaces between Chinese characters, outside code blocks and spans."""
    out: list[str] = []
    for piece in fenced_pieces(text):
        if piece.code is not None:
            out.append(piece.source)
            continue
        for block in re.split(r"(`[^`\n]*`)", piece.source):
            out.append(block if block.startswith("`") else _CJK_GAP_RE.sub("", block))
    return "".join(out)


_STRONG_RE = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_SPAN_RE = re.compile(r"`([^`\n]+)`")


def plain(text: str) -> str:
    """``text`` (the tutor's Markdown) as plain text, for pipes and JSON: no emphasis marks or
    backticks; a fenced block becomes its lines indented by four spaces."""
    out: list[str] = []
    for block in blocks(text):
        if is_code(block):
            lines = block.splitlines()[1:]
            if lines and lines[-1].strip().startswith(("```", "~~~")):
                lines = lines[:-1]
            out.append("\n".join(f"    {line}" if line else "" for line in lines))
            continue
        # emphasis marks outside code only: `__init__` keeps its underscores
        pieces = _SPAN_RE.split(block)  # prose, span, prose, span, ..., prose
        block = "".join(
            piece if i % 2 else _STRONG_RE.sub(lambda m: m.group(1) or m.group(2), piece)
            for i, piece in enumerate(pieces))
        out.append(block.lstrip("# ") if is_heading(block) else block)
    return "\n\n".join(out)
