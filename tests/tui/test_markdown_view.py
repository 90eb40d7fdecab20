"""Lesson text: Chinese paragraphs wrapped in the YAML are joined without a stray space;
code blocks keep their lines whole."""

from __future__ import annotations

from tutor.tui.markdown_view import join_cjk_soft_breaks


def test_a_line_break_between_chinese_characters_is_dropped() -> None:
    assert join_cjk_soft_breaks("张量 y。\n然后计算") == "张量 y。然后计算"


def test_no_space_after_chinese_punctuation_before_latin() -> None:
    assert join_cjk_soft_breaks("又慢又容易错，\nPyTorch 的引擎") == "又慢又容易错，PyTorch 的引擎"
    assert join_cjk_soft_breaks("用 x.grad\n（梯度）") == "用 x.grad（梯度）"
    # emphasis closing (or opening) at the break: 06-matrix-mm's "**保留计算图**\n以便"
    assert join_cjk_soft_breaks("并且**保留计算图**\n以便之后") == "并且**保留计算图**以便之后"
    assert join_cjk_soft_breaks("保留\n*计算图*") == "保留*计算图*"
    # beside punctuation inside the marks, Markdown reads them as emphasis only with the
    # break (or space) kept: "**如何修复：**改为" would show its asterisks
    assert join_cjk_soft_breaks("**两处不同。** 原文") == "**两处不同。** 原文"
    assert join_cjk_soft_breaks("**如何修复：**\n改为") == "**如何修复：**\n改为"


def test_a_list_after_chinese_punctuation_stays_a_list() -> None:
    text = "例如：\n- 第一项\n1. 第二项"
    assert join_cjk_soft_breaks(text) == text


def test_breaks_next_to_latin_text_and_paragraphs_stay() -> None:
    text = "梯度\nx.grad 会\n\n新的一段\nEnglish follows"
    assert join_cjk_soft_breaks(text) == text


def test_code_blocks_are_left_alone() -> None:
    text = "说明\n文字\n```python\n# 第一行注释\n# 第二行注释\n```\n"
    assert join_cjk_soft_breaks(text) == "说明文字\n```python\n# 第一行注释\n# 第二行注释\n```\n"


def test_text_below_the_first_cjk_mark_is_left_as_it_is_without_the_pattern() -> None:
    """English (up to U+2017, the dash "—" included) cannot match any break to join: it is
    returned as it came, and the pattern is not compiled for it."""
    from tutor.tui import markdown_view

    english = "Working gradients out\nby hand is slow — autograd\n\n```python\nx = 1\n```\n"
    markdown_view._cjk_soft_break.cache_clear()
    assert join_cjk_soft_breaks(english) is english
    assert markdown_view._cjk_soft_break.cache_info().currsize == 0
    assert join_cjk_soft_breaks("张量\n然后") == "张量然后"
    assert markdown_view._cjk_soft_break.cache_info().currsize == 1


def test_code_is_drawn_plain_until_highlighting_is_warm(monkeypatch) -> None:
    """The first screen does not wait ~50 ms for the Python lexer; views drawn before it
    was ready are coloured once it is."""
    import asyncio
    import io

    from rich.console import Console
    from textual.app import App, ComposeResult

    from tutor.tui import markdown_view

    def colours(markdown: str) -> set[str]:
        """The colours of the words ``import`` and ``torch`` in the drawn code block."""
        console = Console(width=40, color_system="truecolor", file=io.StringIO())
        lines = console.render_lines(markdown_view._render(markdown), pad=False)
        return {
            str(segment.style.color if segment.style else None)
            for line in lines
            for segment in line
            for word in ("import", "torch")
            if word in segment.text
        }

    code = "Text\n\n```python\nimport torch\n```\n"
    monkeypatch.setitem(markdown_view._highlighting, "ready", False)
    assert len(colours(code)) == 1  # keyword and name alike: plain
    view = markdown_view.MarkdownView(code)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield view

    async def main() -> None:
        async with One().run_test() as pilot:
            before = view.visual
            markdown_view.warm_up_highlighting()
            view.redraw_code()
            await pilot.pause()
            assert view.visual is not before  # drawn again

    asyncio.run(main())
    assert markdown_view.highlighting_ready()
    assert len(colours(code)) == 2  # highlighted


def test_lesson_code_blocks_continue_marked_instead_of_being_cut() -> None:
    """QA2 #25: at 80 columns ``a = torch.tensor([1., 2.], requires_grad=True)`` wrapped
    into two lines that read as broken Python; scrolled sideways instead, it was cut at the
    pane's edge (issue 22 #7). A long line now goes on in the next row after a ``↪``."""
    import asyncio

    from textual.app import App, ComposeResult
    from textual.containers import ScrollableContainer

    from tutor.tui.markdown_view import CodeView, LessonBody, MarkdownView, split_fences

    line = "a = torch.tensor([1., 2.], requires_grad=True)  # a leaf"
    text = f"Some text before.\n\n```python\n{line}\nb = a * 3\n```\n\nAnd after."
    assert [lexer for _, lexer in split_fences(text)] == [None, "python", None]

    class Narrow(App[None]):
        CSS = "LessonBody { width: 30; }"

        def compose(self) -> ComposeResult:
            yield LessonBody(id="body")

    async def main() -> None:
        app = Narrow()
        async with app.run_test(size=(60, 20)) as pilot:
            body = app.query_one(LessonBody)
            await body.show(text)
            await pilot.pause()
            assert body.source == text
            assert len(body.query(MarkdownView)) == 2
            code = body.query_one(CodeView)
            rows = [strip.text.rstrip() for strip in code.render_lines(code.region.reset_offset)]
            assert all(len(row) <= 30 for row in rows)
            continued = [row.strip() for row in rows if row.strip()]
            assert continued[0].startswith("a = torch") and continued[1].startswith("↪")
            whole = "".join(row.removeprefix("↪ ") for row in continued[:-1])
            assert whole == line  # every character there, none cut
            assert continued[-1] == "b = a * 3"  # a line that fits is left alone
            strip = body.query_one(ScrollableContainer)
            assert strip.region.width == 30 and strip.max_scroll_x == 0

    asyncio.run(main())


def test_lesson_body_updates_its_blocks_in_place_when_the_text_keeps_its_shape() -> None:
    """A new text with the same run of prose and code (a language switch, most steps) goes
    into the blocks already there: mounting new ones is awaited, and Textual lays out and
    draws the whole screen while it waits (a second frame on the first screen)."""
    import asyncio

    from textual.app import App, ComposeResult

    from tutor.tui.markdown_view import CodeView, LessonBody, MarkdownView

    english = "Before.\n\n```python\nx = 1\n```\n\nAfter."
    chinese = "之前。\n\n```python\nx = 2\n```\n\n之后。"
    prose_only = "Only prose, no code."

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield LessonBody(english, id="body")

    async def main() -> None:
        app = One()
        async with app.run_test(size=(60, 20)) as pilot:
            body = app.query_one(LessonBody)
            before = list(body.children)
            assert len(before) == 3  # composed with the body: nothing mounted afterwards
            await body.show(chinese)
            await pilot.pause()
            assert list(body.children) == before  # the same widgets...
            assert [view.source for view in body.query(MarkdownView)] == ["之前。\n\n", "\n之后。"]
            assert body.query_one(CodeView).code == "x = 2"  # ...showing the new text
            await body.show(prose_only)
            await pilot.pause()
            assert [type(child) for child in body.children] == [MarkdownView]
            assert body.query_one(MarkdownView).source == prose_only

    asyncio.run(main())


def test_got_and_expected_keep_their_lines_in_chinese() -> None:
    """Issue 22 #5: in zh the verdict's got/expected ran together on one line (its fence
    is indented in a list item, and the Chinese line joining did not see it)."""
    from tutor.tui.markdown_view import join_cjk_soft_breaks

    verdict = "- ✗ **值**（0/1）— 不对\n\n  ```\n  得到：张量\n  应为：向量\n  ```\n"
    assert join_cjk_soft_breaks(verdict) == verdict


def test_no_stray_space_between_chinese_words() -> None:
    """Issue 22 #5: "该张量 的形状是 （未记录）" (a template filled with Chinese words)."""
    from tutor.tui.markdown_view import join_cjk_soft_breaks

    assert join_cjk_soft_breaks("该张量 的形状是 （未记录）。") == "该张量的形状是（未记录）。"
    assert join_cjk_soft_breaks("`x` 的值在 cpu 上") == "`x` 的值在 cpu 上"  # kept by Latin
