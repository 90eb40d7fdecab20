"""What the screen says when the device asked for cannot be used."""

from __future__ import annotations

import glob
import sys

from tutor.i18n import Lang
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
    return f"{text}{'' if lang == 'zh' else ' '}{more}"  # no space after Chinese punctuation
