"""Where the diagnosis catalog's file is, found without importing the diagnosis package: the
chat's caches built from it (the retrieval index, the resolved symptoms) are keyed by its
bytes, and a question from the shell that reads such a cache pays for the hash only."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def catalog_path() -> Path | None:
    """``tutor/diagnosis/catalog.yaml``, or None where there is none."""
    spec = importlib.util.find_spec("tutor.diagnosis")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "catalog.yaml"
    return path if path.is_file() else None
