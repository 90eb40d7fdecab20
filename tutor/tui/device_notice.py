"""What the screen says when the device asked for cannot be used."""

from __future__ import annotations

import glob
import sys
from dataclasses import dataclass

from textual.reactive import reactive
from textual.widgets import Static

from tutor.i18n import Lang
from tutor.tui.cjk_wrap import Wrapped
from tutor.tui.labels import label


def surely_missing(device: str) -> bool:
    """True when ``device`` cannot exist on this machine, known without torch: CUDA needs
    the NVIDIA driver's device files, MPS a Mac. (False means "ask torch", not "present".)"""
    if device.startswith("cuda"):
        return not glob.glob("/dev/nvidia[0-9]*") and sys.platform.startswith("linux")
    if device.startswith("mps"):
        return sys.platform != "darwin"
    return False


def device_notice(asked: str, current: str, devices: list[str], lang: Lang) -> str:
    """One line: the device asked for is not there, where code runs instead, and what the
    learner can switch to (nothing yet while the device list is still coming)."""
    text = label("device_missing", lang, device=asked, current=current)
    others = [device for device in devices if device != current]
    if not devices:
        more = label("device_checking", lang)
    elif others:
        more = label("device_missing_switch", lang, devices=", ".join(others))
    else:
        more = label("device_missing_only", lang)
    return label("device_notice", lang, missing=text, more=more)


@dataclass(frozen=True)
class DeviceProblem:
    """The device asked for cannot be used: ``asked``; runs go to ``current``; ``devices``
    are the ones found (None while the runner has not said)."""

    asked: str
    current: str
    devices: tuple[str, ...] | None = None


class DeviceNotice(Static):
    """The device problem, on screen until the learner picks a device (a toast goes)."""

    lang: reactive[Lang] = reactive("en", init=False)
    problem: reactive[DeviceProblem | None] = reactive(None, init=False)

    def __init__(self, problem: DeviceProblem | None, lang: Lang = "en",
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.set_reactive(DeviceNotice.problem, problem)
        self.set_reactive(DeviceNotice.lang, lang)
        self._draw()

    def watch_lang(self) -> None:
        self._draw()

    def watch_problem(self) -> None:
        self._draw()

    @property
    def message(self) -> str:
        """What the notice says ("" when there is no problem)."""
        problem = self.problem
        if problem is None:
            return ""
        return device_notice(problem.asked, problem.current, list(problem.devices or ()),
                             self.lang)

    def _draw(self) -> None:
        self.display = self.problem is not None
        self.update(Wrapped(self.message))
