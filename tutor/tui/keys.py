"""The key table: one row per action, the single source for the footer, the help screen and
the bindings. Descriptions are label keys, so the footer follows the language.

Textual shows a binding's description in its footer and keys panel, and a binding is fixed
once the app is built. So every key is bound once per language, to the action
``keyed(LANG, ACTION)``: the app's ``check_action`` enables only the learner's language,
which hides the other's from the footer and never runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.binding import Binding

from tutor.i18n import LANGS, Lang
from tutor.tui.labels import label


@dataclass(frozen=True)
class Key(Binding):
    """A row of the key table: a Textual binding whose ``description`` is a label key (the
    words in each language: :func:`bindings` fills them in), shown in the footer only when
    asked (``show``)."""

    show: bool = False
    help: str | None = None
    """Label for the help screen when the footer's short one is not clear on its own."""


KEYS: tuple[Key, ...] = (
    # Ctrl+Enter is not used: many terminals never deliver it.
    Key("ctrl+r,f5", "run", "key_run", show=True, key_display="^r"),
    Key("ctrl+g", "cancel_run", "key_cancel", show=True, key_display="^g"),
    Key("ctrl+t,f3", "hint", "key_hint", show=True, key_display="^t"),
    Key("ctrl+n", "next_step", "key_next", show=True, key_display="^n"),
    # alt+a ("answer"): the text fields bind ctrl+e (end of line) themselves.
    Key("alt+a", "give_up", "key_give_up", show=True, help="key_give_up_help"),
    Key("ctrl+b", "prev_step", "key_prev"),
    Key("ctrl+l,f4", "toggle_lang", "key_lang", show=True, key_display="^l", help="lang_help"),
    Key("f2", "toggle_lessons", "key_lessons", show=True),
    Key("f1", "help", "key_help", show=True),
    Key("f6", "cycle_device", "key_device"),
    Key("f7", "reset_code", "key_reset"),
    Key("f8", "copy_output", "key_copy_output"),
    Key("f9", "copy_diagnosis", "key_copy_diagnosis"),
    Key("f10", "change_theme", "key_theme"),
    # Letters, not digits: Textual reads alt+1 as "¡" (the macOS keyboard's Option+1).
    Key("alt+o", "show_tab('output')", "key_tab_output"),
    Key("alt+v", "show_tab('verdict')", "key_tab_verdict"),
    Key("alt+d", "show_tab('diagnosis')", "key_tab_diagnosis"),
    Key("alt+g", "show_tab('graph')", "key_tab_graph"),
    Key("alt+t", "show_tab('chat')", "key_tab_chat"),
    Key("alt+right", "resize_text(1)", "key_wider_text"),
    Key("alt+left", "resize_text(-1)", "key_narrower_text"),
    Key("ctrl+o", "open_in_editor", "key_open_editor"),
    Key("alt+p", "show_progress", "key_progress"),
    Key("alt+r", "review_quizzes", "key_review"),
    Key("ctrl+p", "command_palette", "key_palette"),
    Key("ctrl+q", "quit", "key_quit"),
    # Keys the focused widget handles itself, listed so a keyboard-only learner finds them.
    Key("escape", "leave_editor", "key_leave_editor"),
    Key("tab,shift+tab", "move_focus", "key_move_focus"),
    Key("ctrl+a", "select_all", "key_select_all"),
    Key("space,enter", "pick_choice", "key_pick_choice"),
)
"""Footer: about seven keys; the rest are on the help screen and in the command palette."""

APP_HANDLED = {"leave_editor", "move_focus", "pick_choice", "select_all"}
"""Actions the focused widget handles itself (listed for the help screen only)."""


def keyed(lang: Lang, action: str) -> str:
    """The action string of ``action``'s binding in ``lang``."""
    return f"keyed({lang!r}, {action!r})"


def bindings() -> list[Binding]:
    """Priority bindings, so keys work while the editor or an input has focus; one set per
    language (see the module's note)."""
    return [
        replace(key, action=keyed(lang, key.action), description=label(key.description, lang),
                priority=True)
        for lang in LANGS
        for key in KEYS
        if key.action not in APP_HANDLED
    ]


def help_rows(lang: Lang) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen."""
    return [(key.key.replace(",", " / "), label(key.help or key.description, lang))
            for key in KEYS]
