"""The app's own YAML data files (message catalogs, the diagnosis catalog, the chat's data),
parsed once per content.

A file is parsed by :mod:`tutor.yaml_read` (libyaml, YAML 1.2, with its limits on size,
aliases, depth and tags); reading JSON back is still faster than building the data from
YAML events in Python, so what a file parsed to is kept as JSON under
the cache dir, keyed by the sha256 of its bytes, so an edited file is never served stale; data
JSON cannot hold exactly (a NaN, a date, a number as a mapping key) is not kept. A cache that
cannot be read or written is skipped: it only saves time. Lesson files have their own cache
(:mod:`tutor.course.cache`): their parse keeps line numbers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tutor.paths import cache_root, write_cache_file
from tutor.yaml_read import MAX_BYTES, YamlProblem, decode, load

FORMAT = b"yaml-core-2"
"""Part of every key: bump it if what a file parses to changes for the same bytes."""


def cache_dir() -> Path:
    return cache_root() / "yaml"


def read_yaml(path: Path) -> Any:
    """The data of the YAML file at ``path`` (the safe loader's plain types).

    Raises ``OSError`` when the file cannot be read, and ``YAMLError`` (ruamel's, which the
    callers catch) when it is not YAML this reader takes, with ``path:line:col``.
    """
    with Path(path).open("rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    entry = cache_dir() / f"{hashlib.sha256(FORMAT + raw).hexdigest()}.json"
    try:
        return json.loads(entry.read_bytes())
    except (OSError, ValueError):
        pass
    try:
        data = load(decode(raw))
    except (YamlProblem, UnicodeDecodeError) as exc:
        from ruamel.yaml.error import YAMLError

        where = f"{exc.line}:{exc.col}: " if isinstance(exc, YamlProblem) else ""
        reason = exc.text.en if isinstance(exc, YamlProblem) else str(exc)
        raise YAMLError(f"{path}:{where}{reason}") from None
    _store(entry, data)
    return data


def _store(entry: Path, data: Any) -> None:
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a date, a NaN
        return
    if json.loads(text) == data:  # not a number as a key, say: it would read back different
        write_cache_file(entry, text)
