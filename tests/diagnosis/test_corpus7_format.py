"""corpus7, the frozen test split that follows corpus6: its format, the promises its README
makes (size, mix, sources never used before), that test.yaml is the file that was frozen, and
that every program still does on this torch what its record says. Runs the programs, never the
diagnosis engine."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus7" / "test.yaml"
EARLIER_SETS = ("corpus", "corpus2", "corpus3", "corpus4", "corpus5", "corpus6", "heldout",
                "heldout2", "error_space")
# Sources used by the chat material are off limits too.
OTHER_PLACES = (ROOT / "tests" / "chat", ROOT / "tutor" / "chat" / "cards")
FROZEN_SHA256 = "7e54bf0d24e253e66f4c8c4929d727473caaca8a18ea1d5d6c435ec3918af7e0"
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_REF = re.compile(r"\b([A-Za-z0-9][\w.-]*/[\w.-]+)#(\d+)")
_GITHUB = re.compile(r"^github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)")


def _recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus7_record", HERE / "corpus7" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


record = _recorder()
ITEMS = record.load_items()


def _normalized(url: str) -> str:
    """The same page however it was written: no scheme, no www., no trailing slash or dot;
    a GitHub issue or pull request becomes owner/repo#N, the way READMEs name dropped ones."""
    url = re.sub(r"^https?://(www\.)?", "", url.strip().lower()).rstrip("/.,;:")
    match = _GITHUB.match(url)
    return f"{match.group(1)}#{match.group(2)}" if match else url


def _earlier_files() -> Iterator[Path]:
    for name in EARLIER_SETS:
        yield from sorted(p for p in (HERE / name).rglob("*") if p.is_file())
    for place in OTHER_PLACES:
        if place.is_dir():
            yield from sorted(p for p in place.rglob("*") if p.is_file())


def _earlier_sources() -> set[str]:
    """Every URL and every owner/repo#N in the earlier sets (sources, READMEs, judge notes,
    comments) and in the chat tests and cards."""
    found: set[str] = set()
    for path in _earlier_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found |= {_normalized(url) for url in _URL.findall(text)}
        found |= {f"{owner.lower()}#{number}" for owner, number in _REF.findall(text)}
        found |= {f"pytorch/pytorch#{n}" for n in re.findall(r"\bpytorch#(\d+)", text)}
    return found


def _families_of(path: Path) -> set[str]:
    return {raw["family"] for raw in YAML(typ="safe").load(path.read_text("utf-8"))["items"]}


def test_test_yaml_is_the_frozen_file() -> None:
    """Any edit of test.yaml after the freezing commit fails here (the split is scored once)."""
    assert hashlib.sha256(CORPUS.read_bytes()).hexdigest() == FROZEN_SHA256


def test_every_item_is_valid_and_recorded_on_this_torch_line() -> None:
    ids = [item.id for item in ITEMS]
    assert len(ids) == len(set(ids))
    for item in ITEMS:
        assert item.observed is not None, item.id
        assert item.observed.torch.startswith("2.13.0"), item.id


def test_the_mix_is_the_one_the_readme_promises() -> None:
    total = len(ITEMS)
    silent = sum(item.kind == "silent" for item in ITEMS)
    inside_code = sum(item.scope != "module" for item in ITEMS)
    chinese = sum(item.id.endswith("-zh") for item in ITEMS)
    assert 30 <= total <= 40
    assert 0.40 <= silent / total <= 0.60
    assert inside_code / total >= 0.50
    assert chinese >= 6
    assert len({item.family for item in ITEMS}) >= 28


def test_no_family_is_overrepresented() -> None:
    """Many families, each mechanism at most twice (no family has more than two items)."""
    counts = Counter(item.family for item in ITEMS)
    assert max(counts.values()) <= 2


def test_families_new_to_earlier_sets_say_what_they_are() -> None:
    known: set[str] = set()
    for path in ("corpus2/dev.yaml", "corpus2/test.yaml", "corpus3/test.yaml", "corpus4/test.yaml",
                 "corpus5/test.yaml", "corpus6/test.yaml"):
        known |= _families_of(HERE / path)
    unexplained = [item.id for item in ITEMS if item.family not in known and not item.family_note]
    assert unexplained == []


def test_sources_are_distinct_and_none_was_used_before() -> None:
    sources = [_normalized(str(item.source)) for item in ITEMS]
    assert len(sources) == len(set(sources))
    earlier = _earlier_sources()
    assert len(earlier) > 700  # the earlier sets were found and read: the check below has teeth
    assert sorted(set(sources) & earlier) == []


@pytest.mark.slow
def test_every_program_reproduces_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    """All programs, each in a child of one worker process (the recorder's --check)."""
    status = record.main(["--check"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(ITEMS)}/{len(ITEMS)} programs reproduce their record" in report
