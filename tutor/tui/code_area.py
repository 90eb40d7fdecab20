"""The code area: the editor and, under it, the run bar (run, cancel, reset, device, status).

Mounted the first time a step shows code (reading and quiz steps have none): the editor's
syntax tree set-up and a dozen widgets stay off the first screen when it is a reading step.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Select, Static

from tutor.i18n import Lang
from tutor.tui.code_editor import CodeEditor
from tutor.tui.labels import label
from tutor.tui.relabel import set_label


class CodeArea(Vertical):
    def __init__(
        self,
        *,
        devices: list[str],
        device: str,
        dark: bool,
        highlight: bool = True,
        **kwargs: object,
    ) -> None:
        """``highlight=False``: plain text until :meth:`highlight` (the syntax tree set-up
        takes ~50 ms, too long to wait for when the editor is on the first screen)."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._devices = devices
        self._device = device
        self._dark = dark
        self._language = "python" if highlight else None

    def compose(self) -> ComposeResult:
        editor = CodeEditor.code_editor(language=self._language, id="editor")
        editor.theme = editor_theme(self._dark)
        yield editor
        with Horizontal(id="run-bar"):
            yield Button(id="btn-run", action="app.run", compact=True, variant="success")
            cancel = Button(id="btn-cancel", action="app.cancel_run", compact=True, variant="error")
            cancel.display = False
            yield cancel
            yield Button(id="btn-reset", action="app.reset_code", compact=True)
            yield Select[str](
                [(device, device) for device in self._devices],
                value=self._device,
                allow_blank=False,
                compact=True,
                id="device",
            )
            yield Static(id="run-status", markup=False)

    def highlight(self) -> None:
        self.editor.language = "python"

    @property
    def editor(self) -> CodeEditor:
        return self.query_one("#editor", CodeEditor)

    def relabel(self, lang: Lang) -> None:
        set_label(self.query_one("#btn-run", Button), label("btn_run", lang))
        set_label(self.query_one("#btn-cancel", Button), label("btn_cancel", lang))
        set_label(self.query_one("#btn-reset", Button), label("btn_reset", lang))

    def set_buttons(self, *, runnable: bool, running: bool) -> None:
        """Run and Reset on code steps; on an answer step (its code is read-only) the bar
        keeps the device, the running status and Cancel."""
        run = self.query_one("#btn-run", Button)
        run.display = runnable
        run.disabled = running
        self.query_one("#btn-reset", Button).display = runnable
        self.query_one("#btn-cancel", Button).display = running


def editor_theme(dark: bool) -> str:
    """A light syntax theme on light app themes."""
    return "monokai" if dark else "github_light"
