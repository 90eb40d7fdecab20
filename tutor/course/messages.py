"""The bilingual lint and loading messages (``lint_messages.yaml``): data, filled in both
languages."""

from __future__ import annotations

from pathlib import Path

from tutor.i18n import Catalog

CATALOG_PATH = Path(__file__).with_name("lint_messages.yaml")

msg = Catalog(CATALOG_PATH)
"""``msg("key", name=...)``: the message ``key`` with its placeholders filled."""
