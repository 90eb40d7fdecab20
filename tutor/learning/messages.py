"""The learning session's own words, data in both languages (``messages.yaml``)."""

from __future__ import annotations

from pathlib import Path

from tutor.i18n import Catalog

msg = Catalog(Path(__file__).with_name("messages.yaml"))
"""``msg("key", name=...)``: the message ``key`` with its placeholders filled."""
