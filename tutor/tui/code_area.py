"""The code area: the editor and, under it, the run bar (run, cancel, reset, device, status).

Mounted the first time a step shows code (reading and quiz steps have none): the editor's
syntax tree and a dozen widgets stay off the first screen when it is a reading step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Button, Select, Static

from tutor.i18n import Lang
from tutor.tui.code_editor import CodeEditor
from tutor.tui.labels import label
from tutor.tui.relabel import set_label

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class CodeArea(Vertical):
    """The editor and its run bar; picking a device posts :class:`CodeArea.DevicePicked`."""

    @dataclass
    class DevicePicked(Message):
        device: str

    lang: reactive[Lang] = reactive("en", init=False)
    running: reactive[bool] = reactive(False, init=False)
    runnable: reactive[bool] = reactive(True, init=False)
    """A code step (Run, Reset); an answer step's read-only code has neither."""

    def __init__(self, *, devices: list[str], device: str, dark: bool, lang: Lang = "en",
                 code: str = "", runnable: bool = True, focus: bool = False,
                 highlight: bool = True, **kwargs: object) -> None:
        """``code``: what the editor shows first, editable when ``runnable`` (an answer
        step's code is read-only), long lines wrapped (course lines run to 74 characters;
        the editor has about 40 columns at 80, 58 at 120: a cut line hid what to do);
        ``focus``: the editor takes the focus once mounted;
        ``highlight=False``: plain text until :meth:`highlight` (building the syntax tree
        would hold up the first screen when it shows code)."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._devices = devices
        self._device = device
        self._dark = dark
        self._code = code
        self._focus = focus
        self._language = "python" if highlight else None
        self.set_reactive(CodeArea.lang, lang)
        self.set_reactive(CodeArea.runnable, runnable)
        self._spinner: Timer | None = None
        self._started = 0.0

    def compose(self) -> ComposeResult:
        editor = CodeEditor.code_editor(self._code, language=self._language, id="editor",
                                        theme=editor_theme(self._dark),
                                        read_only=not self.runnable, soft_wrap=True)
        yield editor
        lang = self.lang
        with Horizontal(id="run-bar"):
            yield Button(label("btn_run", lang), id="btn-run", action="app.run", compact=True,
                         variant="success")
            cancel = Button(label("btn_cancel", lang), id="btn-cancel", action="app.cancel_run",
                            compact=True, variant="error")
            cancel.display = False
            yield cancel
            yield Button(label("btn_reset", lang), id="btn-reset", action="app.reset_code",
                         compact=True)
            yield Select[str](
                [(device, device) for device in self._devices],
                value=self._device,
                allow_blank=False,
                compact=True,
                id="device",
            )
            yield Static(id="run-status", markup=False)

    def on_mount(self) -> None:
        self._show_buttons()
        if self._focus:
            self.editor.focus()

    def highlight(self) -> None:
        self.editor.language = "python"

    @property
    def editor(self) -> CodeEditor:
        return self.query_one(CodeEditor)

    @property
    def device_picker(self) -> Select[str]:
        return self.query_one("#device", Select)

    def watch_lang(self) -> None:
        for name in ("run", "cancel", "reset"):
            set_label(self.query_one(f"#btn-{name}", Button), label(f"btn_{name}", self.lang))

    def watch_runnable(self) -> None:
        self._show_buttons()

    def watch_running(self, running: bool) -> None:
        self._show_buttons()
        if running:
            self._started = time.monotonic()
            self._tick()
            self._spinner = self.set_interval(0.1, self._tick)
        else:
            if self._spinner is not None:
                self._spinner.stop()
                self._spinner = None
            self.query_one("#run-status", Static).update("")

    def _show_buttons(self) -> None:
        """Run and Reset on code steps; on an answer step (its code is read-only) the bar
        keeps the device, the running status and Cancel."""
        run = self.query_one("#btn-run", Button)
        run.display = self.runnable
        run.disabled = self.running
        self.query_one("#btn-reset", Button).display = self.runnable
        self.query_one("#btn-cancel", Button).display = self.running

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._started
        frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
        text = label("running", self.lang, device=self.device_picker.value)
        self.query_one("#run-status", Static).update(f"{frame} {text} {elapsed:.1f}s")

    def offer_devices(self, devices: list[str], current: str) -> None:
        """The devices to pick from, ``current`` picked (not a learner's pick: no message).
        A picker not mounted yet takes them when it is composed."""
        self._devices, self._device = list(devices), current
        pickers = self.query("#device").results(Select)
        for picker in [picker for picker in pickers if picker.is_mounted]:
            with picker.prevent(Select.Changed):
                picker.set_options([(device, device) for device in devices])
                picker.value = current

    @on(Select.Changed, "#device")
    def _device_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value != event.select.value:
            return  # stale: a later programmatic change already replaced this value
        if isinstance(event.value, str):
            self.post_message(self.DevicePicked(event.value))


def editor_theme(dark: bool) -> str:
    """A light syntax theme on light app themes."""
    return "monokai" if dark else "github_light"
