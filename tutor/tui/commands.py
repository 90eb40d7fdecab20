"""Command palette entries: jump to a lesson, run, hint, next/previous step, device,
language. Each entry calls the same app action a key or button does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tutor.tui.labels import label

if TYPE_CHECKING:
    from tutor.tui.app import TutorApp


class TutorCommands(Provider):
    def _entries(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """(title, help, callback) for every entry, in the app's current language."""
        app = cast("TutorApp", self.app)
        session = app.session
        lang = session.lang
        yield label("key_run", lang), label("palette_run_help", lang), app.action_run
        yield label("key_hint", lang), label("palette_hint_help", lang), app.action_hint
        yield label("key_next", lang), label("palette_next_help", lang), app.action_next_step
        yield label("key_prev", lang), label("palette_prev_help", lang), app.action_prev_step
        yield label("palette_lang", lang), label("key_lang", lang), app.action_toggle_lang
        yield label("key_reset", lang), label("key_reset", lang), app.action_reset_code
        yield label("key_copy_output", lang), "", app.action_copy_output
        yield label("key_copy_diagnosis", lang), "", app.action_copy_diagnosis
        yield label("key_graph", lang), label("graph_help", lang), app.action_draw_graph
        yield label("key_focus_chat", lang), label("chat_placeholder", lang), app.action_focus_chat
        yield label("key_theme", lang), "", app.action_change_theme
        yield label("key_help", lang), "", app.action_help
        yield label("key_open_editor", lang), "", app.action_open_in_editor
        yield label("key_progress", lang), "", app.action_show_progress
        yield label("key_review", lang), "", app.action_review_quizzes
        for tab in ("output", "verdict", "diagnosis", "graph", "chat"):
            yield label(f"key_tab_{tab}", lang), "", partial(app.action_show_tab, tab)
        for device in session.known_devices or ["cpu"]:
            yield (
                label("palette_device", lang, device=device),
                label("palette_device_help", lang),
                partial(app.select_device, device),
            )
        for lesson in session.course.lessons:
            yield (
                label("palette_open", lang, title=lesson.title.get(lang)),
                label("palette_lesson_help", lang),
                partial(app.open_lesson, lesson.id),
            )

    async def discover(self) -> Hits:
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(title, callback, help=help_text or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                highlighted = matcher.highlight(title)
                yield Hit(score, highlighted, callback, text=title, help=help_text or None)
