"""The app's small YAML data files (message catalogs, the command line's help, the chat's
domains, solution-request parts, symptoms, ...), read once and then kept as JSON under the
cache dir, keyed by the sha256 of the file: a shell command such as `tutor ask` then neither
imports the YAML parser nor parses the files again. A file that changes
is read again (its key changes); a broken one raises what :func:`tutor.yaml_read.read_yaml`
raises, at its line and column."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def read_data(path: Path) -> Any:
    """The data of the YAML file at ``path``, as :func:`tutor.yaml_read.read_yaml` gives it."""
    from tutor.paths import cache_root, write_cache_file

    raw = Path(path).read_bytes()
    key = hashlib.sha256(raw).hexdigest()[:32]
    entry = cache_root() / "data" / f"{Path(path).stem}-{key}.json"
    try:
        return json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    from tutor.yaml_read import read_yaml

    data = read_yaml(path)
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):  # not plain JSON data (a date, say): read it each time
        return data
    write_cache_file(entry, text)
    return data
