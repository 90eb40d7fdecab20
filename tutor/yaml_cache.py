"""The app's own YAML data files (message catalogs, the diagnosis catalog, the chat's data),
parsed once per content.

ruamel.yaml's pure-Python parser takes ~70–90 ms for a catalog of a few hundred lines, and
importing it as long again: every ``tutor grade`` paid ~0.16 s for its two message catalogs,
and a learner's first diagnosis or question more. What a file parsed to is kept as JSON under
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

FORMAT = b"yaml-safe-1"
"""Part of every key: bump it if what a file parses to changes for the same bytes."""


def cache_dir() -> Path:
    return cache_root() / "yaml"


def read_yaml(path: Path) -> Any:
    """The data of the YAML file at ``path`` (the safe loader's plain types).

    Raises ``OSError`` when the file cannot be read and ruamel's ``YAMLError`` when it is not
    valid YAML, as parsing it directly would.
    """
    raw = Path(path).read_bytes()
    entry = cache_dir() / f"{hashlib.sha256(FORMAT + raw).hexdigest()}.json"
    try:
        return json.loads(entry.read_bytes())
    except (OSError, ValueError):
        pass
    from ruamel.yaml import YAML  # only on a miss: the import alone takes tens of ms

    data = YAML(typ="safe").load(raw.decode("utf-8"))
    _store(entry, data)
    return data


def _store(entry: Path, data: Any) -> None:
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a date, a NaN
        return
    if json.loads(text) == data:  # not a number as a key, say: it would read back different
        write_cache_file(entry, text)
