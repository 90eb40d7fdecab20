"""What the learner chose in the app, kept per user across restarts: language, theme,
device. One small JSON file in the data directory (next to the progress store).

A frozen dataclass rather than pydantic-settings: it is read before the first screen,
which is kept free of pydantic, and there is nothing to merge from the environment (the
command line's ``--lang`` and ``--device`` win over it where they are given).

The saved language is one step of :func:`choose_lang`, the order every face (the app and
each command) picks its language in.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from tutor.i18n import LANGS, Lang, as_lang, env_lang, locale_lang

FILE_NAME = "settings.json"


@dataclass(frozen=True)
class Settings:
    lang: Lang | None = None
    theme: str | None = None
    device: str | None = None

    def with_(self, **changes: str | None) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def settings_path(data_dir: Path | None = None) -> Path:
    from tutor.paths import data_root

    return (data_dir if data_dir is not None else data_root()) / FILE_NAME


def load_settings(path: Path) -> Settings:
    """The saved settings; a missing, unreadable or malformed file (or a value of the wrong
    kind) is no setting at all: never a reason not to start."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Settings()
    if not isinstance(raw, dict):
        return Settings()
    known = {field.name for field in fields(Settings)}
    values = {k: v for k, v in raw.items() if k in known and isinstance(v, str) and v}
    if values.get("lang") not in LANGS:
        values.pop("lang", None)
    return Settings(**values)  # type: ignore[arg-type]


def save_settings(path: Path, settings: Settings) -> None:
    """Write atomically (a crash leaves the old file); a folder that cannot be written
    loses the setting, not the session."""
    import tempfile  # (not at import: the settings are read before the first screen)

    data = {k: v for k, v in asdict(settings).items() if v is not None}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False, indent=2)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


class SettingsStore:
    """The settings file, read once; :meth:`update` changes and saves it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.current = load_settings(path)

    def update(self, **changes: str | None) -> None:
        new = self.current.with_(**changes)
        if new != self.current:
            self.current = new
            save_settings(self.path, new)


def choose_lang(given: object, saved: Settings, otherwise: Callable[[], Lang] = locale_lang
                ) -> Lang:
    """The language of every face, the app's and each command's: ``given`` (``--lang``),
    else ``TUTOR_LANG``, else the language ``saved`` in the app, else ``otherwise()``: the
    locale, unless a face knows better (the language the exercise files were written in,
    the question's language)."""
    return as_lang(given) or env_lang() or saved.lang or otherwise()
