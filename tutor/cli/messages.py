"""The command line's own words, data in both languages: what the commands print
(``messages.yaml``) and their help (``help.yaml``)."""

from __future__ import annotations

from pathlib import Path

from tutor.i18n import Catalog

msg = Catalog(Path(__file__).with_name("messages.yaml"))
"""``msg("key", name=...)``: the message ``key`` with its placeholders filled."""
help_text = Catalog(Path(__file__).with_name("help.yaml"))
"""Each command's summary, description and options' help, the top level's too."""
