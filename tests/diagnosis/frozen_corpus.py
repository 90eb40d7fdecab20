"""What the format tests of the frozen diagnosis corpora share: loading a corpus's recorder
(its ``record.py``, run as a script too), the families earlier sets named, and every source an
earlier set cited (URLs and ``owner/repo#N``, compared per thread)."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_REF = re.compile(r"\b([A-Za-z0-9][\w.-]*/[\w.-]+)#(\d+)")
_GITHUB = re.compile(r"^github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)")


def load_recorder(corpus: str) -> ModuleType:
    """``tests/diagnosis/<corpus>/record.py`` as the module ``<corpus>_record``."""
    spec = importlib.util.spec_from_file_location(f"{corpus}_record", HERE / corpus / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def families_of(path: Path) -> set[str]:
    return {raw["family"] for raw in YAML(typ="safe").load(path.read_text("utf-8"))["items"]}


def normalized(url: str) -> str:
    """The same page however it was written: no scheme, no www., no trailing slash or dot;
    a GitHub issue or pull request becomes owner/repo#N, the way READMEs name dropped ones."""
    url = re.sub(r"^https?://(www\.)?", "", url.strip().lower()).rstrip("/.,;:")
    match = _GITHUB.match(url)
    return f"{match.group(1)}#{match.group(2)}" if match else url


def _files(sets: Iterable[str], places: Iterable[Path]) -> Iterator[Path]:
    for name in sets:
        yield from sorted(p for p in (HERE / name).rglob("*") if p.is_file())
    for place in places:
        if place.is_dir():
            yield from sorted(p for p in place.rglob("*") if p.is_file())


def earlier_sources(sets: Iterable[str], places: Iterable[Path]) -> set[str]:
    """Every URL and every owner/repo#N in the earlier sets (sources, READMEs, judge notes,
    comments) and in ``places`` (the chat tests and cards)."""
    found: set[str] = set()
    for path in _files(sets, places):
        text = path.read_text(encoding="utf-8", errors="replace")
        found |= {normalized(url) for url in _URL.findall(text)}
        found |= {f"{owner.lower()}#{number}" for owner, number in _REF.findall(text)}
        found |= {f"pytorch/pytorch#{n}" for n in re.findall(r"\bpytorch#(\d+)", text)}
    return found
