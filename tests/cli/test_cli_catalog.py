"""The command line's gettext catalog: what argparse says in Chinese (the tutor's own help is
in help.yaml: tests/cli/test_help_words.py)."""

from __future__ import annotations

import argparse
import ast
import gettext
import inspect
from pathlib import Path

import polib

from tutor.cli.parser import DOMAIN, LOCALE_DIR, catalog

PO = LOCALE_DIR / "zh" / "LC_MESSAGES" / f"{DOMAIN}.po"
MO = PO.with_suffix(".mo")
LAID_OUT_BY_THE_PARSER = {"usage: "}
"""argparse's ids the catalog leaves out on purpose (see the .po's header)."""


def _entries(po: polib.POFile | polib.MOFile) -> dict[tuple[str, str], tuple[str, ...]]:
    return {(e.msgid, e.msgid_plural): (e.msgstr,) if not e.msgid_plural else
            tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural)) for e in po}


def test_the_compiled_catalog_is_the_po_file(tmp_path: Path) -> None:
    po = polib.pofile(str(PO))
    assert not po.fuzzy_entries() and not po.untranslated_entries()
    shipped = polib.mofile(str(MO))
    assert _entries(shipped) == _entries(po), (
        f"rebuild {MO.name}: msgfmt -o {MO.name} {PO.name} (in {PO.parent})")
    # and it reads as gettext reads it
    with MO.open("rb") as handle:
        translation = gettext.GNUTranslations(handle)
    assert translation.gettext("options") == "选项"
    assert translation.ngettext("expected %s argument", "expected %s arguments", 3) == \
        "后面需要 %s 个值"


def _argparse_ids() -> set[tuple[str, ...]]:
    """Every message id this Python's argparse looks up through gettext: (singular,) or
    (singular, plural)."""
    ids = set()
    for node in ast.walk(ast.parse(inspect.getsource(argparse))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("_", "ngettext"):
            words = tuple(arg.value for arg in node.args
                          if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
            if words:
                ids.add(words)
    return ids


def test_every_message_of_this_pythons_argparse_is_translated() -> None:
    zh = catalog("zh")
    assert len(_argparse_ids()) > 25
    missing = sorted(ids for ids in _argparse_ids() if ids[0] not in LAID_OUT_BY_THE_PARSER
                     and (zh.gettext(ids[0]) == ids[0] if len(ids) == 1
                          else zh.ngettext(ids[0], ids[1], 2) == ids[1]))
    assert not missing, f"add these to {PO}: {missing}"
