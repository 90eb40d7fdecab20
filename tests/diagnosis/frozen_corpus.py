"""What the format tests of the frozen diagnosis corpora share: a corpus's recorder, the
families earlier sets named, and every source an earlier set cited (URLs and ``owner/repo#N``,
compared per thread).

Every corpus in corpus3's format is recorded by corpus3's recorder (``corpus3/record.py``),
pointed at the corpus's file by this module, also from the shell::

    .venv/bin/python tests/diagnosis/frozen_corpus.py corpus14 --check     # compare with test.yaml
    .venv/bin/python tests/diagnosis/frozen_corpus.py corpus14 --write     # fill `observed`
    .venv/bin/python tests/diagnosis/frozen_corpus.py corpus14 --check --seed 1
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_REF = re.compile(r"\b([A-Za-z0-9][\w.-]*/[\w.-]+)#(\d+)")
_GITHUB = re.compile(r"^github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)")


def load_recorder(corpus: str) -> Any:
    """The recorder of ``tests/diagnosis/<corpus>``: its own ``record.py`` (corpus3's), else
    corpus3's pointed at its ``test.yaml`` (a dev set's ``dev.yaml``)."""
    if not (HERE / corpus / "record.py").exists():
        folder = HERE / corpus
        return recorder_for(folder / "test.yaml" if (folder / "test.yaml").exists()
                            else folder / "dev.yaml")
    spec = importlib.util.spec_from_file_location(f"{corpus}_record", HERE / corpus / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@cache
def families_of(path: Path) -> frozenset[str]:
    # each corpus is read by every later one's test: once per process is enough (frozen files)
    return frozenset(raw["family"]
                     for raw in YAML(typ="safe").load(path.read_text("utf-8"))["items"])


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
        elif place.is_file():
            yield place


def earlier_sources(sets: Iterable[str], places: Iterable[Path]) -> set[str]:
    """Every URL and every owner/repo#N in the earlier sets (sources, READMEs, judge notes,
    comments) and in ``places`` (the chat tests and cards)."""
    found: set[str] = set()
    for path in _files(sets, places):
        found |= _sources_in(path, path.stat().st_mtime_ns)
    return found


@cache
def _sources_in(path: Path, _mtime: int) -> frozenset[str]:
    """The sources one file cites (cached by its modification time: every later set reads
    the earlier ones' files)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return frozenset({normalized(url) for url in _URL.findall(text)}
                     | {f"{owner.lower()}#{number}" for owner, number in _REF.findall(text)}
                     | {f"pytorch/pytorch#{n}" for n in re.findall(r"\bpytorch#(\d+)", text)})


class CorpusRecorder:
    """corpus3's recorder (``../corpus3/record.py``) pointed at one corpus file, for a corpus in
    corpus3's format whose ``record.py`` only names its file."""

    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self.module = sys.modules.get("corpus3_record") or load_recorder("corpus3")

    def load_items(self, path: Path | None = None) -> list[Any]:
        """The items of the corpus (or of another file in its format), validated."""
        items: list[Any] = self.module.load_items(path or self.corpus)
        return items

    def main(self, argv: list[str] | None = None) -> int:
        """corpus3's command line, on this corpus's file unless --file names another."""
        args = list(sys.argv[1:] if argv is None else argv)
        if "--file" not in args:
            args += ["--file", str(self.corpus)]
        status: int = self.module.main(args)
        return status


def recorder_for(corpus: Path) -> CorpusRecorder:
    return CorpusRecorder(corpus)


def main(argv: list[str] | None = None) -> int:
    """``frozen_corpus.py CORPUS --check|--write [...]``: corpus3's command line on that
    corpus's file."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-") or not (HERE / args[0]).is_dir():
        print("usage: frozen_corpus.py CORPUS (a folder of tests/diagnosis) --check|--write "
              "[--seed N] [--only ID ...]", file=sys.stderr)
        return 2
    status: int = load_recorder(args[0]).main(args[1:])
    return status


# --- the checks every frozen corpus's format test makes ------------------------------------


def judged_places(root: Path, later: Iterable[str] = (), beside: Iterable[str] = ()
                  ) -> tuple[Path, ...]:
    """The chat tests and cards and every judged benchmark run except ``later`` (the records
    of a set's own scoring and after, which quote its sources) and the question sets
    ``beside`` (built side by side with the split, for the same measure: neither builder saw
    the other's, so a thread both found is not earlier material)."""
    judged = root / "benchmarks" / "judged"
    days = sorted(day for day in judged.iterdir() if day.is_dir() and day.name not in set(later))
    chat = root / "tests" / "chat"
    skip = set(beside)
    return (*sorted(p for p in chat.iterdir() if p.name not in skip),
            root / "tutor" / "chat" / "cards", *days)


def assert_valid_and_recorded(items: Sequence[Any], torch_line: str = "2.13.0") -> None:
    """Unique ids, and every item recorded on ``torch_line``."""
    ids = [item.id for item in items]
    assert len(ids) == len(set(ids))
    for item in items:
        assert item.observed is not None, item.id
        assert item.observed.torch.startswith(torch_line), item.id


def assert_mix(
    items: Sequence[Any], *, chinese: int, families: int, size: tuple[int, int] = (24, 32)
) -> None:
    """The promised mix: size, 40-60% silent, at least half with the cause in a function or a
    class, enough Chinese sources and families, no family above two items."""
    total = len(items)
    silent = sum(item.kind == "silent" for item in items)
    inside_code = sum(item.scope != "module" for item in items)
    assert size[0] <= total <= size[1]
    assert 0.40 <= silent / total <= 0.60
    assert inside_code / total >= 0.50
    assert sum(item.id.endswith("-zh") for item in items) >= chinese
    assert len({item.family for item in items}) >= families
    assert max(Counter(item.family for item in items).values()) <= 2


def unexplained_families(items: Sequence[Any], known_files: Iterable[Path]) -> list[str]:
    """Ids of items whose family no earlier file names and that carry no family_note."""
    known: set[str] = set()
    for path in known_files:
        known |= families_of(path)
    return [item.id for item in items if item.family not in known and not item.family_note]


def assert_sources_new(items: Sequence[Any], sets: Iterable[str], places: Iterable[Path]) -> None:
    """Every item has its own source and none was a source of an earlier set or place."""
    sources = [normalized(str(item.source)) for item in items]
    assert len(sources) == len(set(sources))
    earlier = earlier_sources(sets, places)
    assert len(earlier) > 1000  # the earlier sets were found and read: the check has teeth
    assert sorted(set(sources) & earlier) == []


if __name__ == "__main__":
    sys.exit(main())
