"""Sharded grading: the parts of 1, 3 and 7 shards merge into the reports of one run, and a
merge refuses parts that do not make a whole class."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import tutor.sandbox
from tutor.cli import main
from tutor.grading.shards import ShardError, parse_shard, shard_of
from tutor.paths import private_folders
from tutor.sandbox import Sandbox

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parents[1] / "grading" / "submissions"


def seed_lesson_data() -> dict[str, object]:
    """tests/grading's seed exercises (its conftest, loaded under a name of its own)."""
    spec = importlib.util.spec_from_file_location("grading_seed", CORPUS.parent / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.seed_lesson_data()


def normalised_json(path: Path) -> dict[str, object]:
    report = json.loads(path.read_text(encoding="utf-8"))
    report.pop("created")
    report.pop("shard", None)
    for entry in report["submissions"]:
        entry.pop("duration_ms")
    return report


def normalised_junit(path: Path) -> str:
    return re.sub(r' time="[0-9.]+"', "", path.read_text(encoding="utf-8"))


HANGS = {("fay", "mm.py"), ("fay", "nonscalar.py"), ("gus", "square.py")}
"""Each waits out the whole ``--timeout`` in each of the four gradings: left out here, as a
timeout is one more ``error`` entry beside the corpus's others (an exception, memory, a
forbidden import, an early exit); tests/grading grades them."""


def corpus_without_hangs(folder: str, names: list[str]) -> set[str]:
    return {name for name in names
            if name.endswith(".toml") or (Path(folder).name, name) in HANGS}


class OneSandbox:
    """Stands in for ``tutor.sandbox.Sandbox`` in ``tutor grade``: every shard's run uses one
    started sandbox, made with the folders the command hides (each run is a fresh fork of
    its server either way), instead of starting a server of its own (~3 s each)."""

    def __init__(self, hide: list[Path]) -> None:
        self.hide = hide
        self.box = Sandbox(hide=hide)

    def __call__(self, *, hide: list[Path]) -> OneSandbox:
        assert hide == self.hide, "the command hides what the shared sandbox hides"
        return self

    def __enter__(self) -> Sandbox:
        return self.box

    def __exit__(self, *exc_info: object) -> None:
        pass


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The class graded once and as 1, 3 and 7 shards, each merged. The one run starts its
    own sandbox, as ``tutor grade`` does; the 11 shard runs share one."""
    here = tmp_path_factory.mktemp("shards")
    (here / "lessons").mkdir()
    (here / "lessons" / "90-seed.yaml").write_text(json.dumps(seed_lesson_data()),
                                                   encoding="utf-8")
    shutil.copytree(CORPUS, here / "subs", ignore=corpus_without_hangs)
    (here / "subs" / "zoe").mkdir()  # a student with nothing gradable is a row of zeros
    common = ["--lessons", str(here / "lessons"), "--timeout", "3", "--lang", "en"]
    assert main(["grade", str(here / "subs"), *common, "--json", str(here / "one.json"),
                 "--junit", str(here / "one.xml"), "--csv", str(here / "one.csv")]) == 0
    shared = OneSandbox(private_folders(here / "lessons", also=[(here / "subs").resolve()]))
    with pytest.MonkeyPatch.context() as patch, shared.box:
        patch.setattr(tutor.sandbox, "Sandbox", shared)
        for count in (1, 3, 7):
            parts = []
            for index in range(1, count + 1):
                part = here / f"part-{index}-of-{count}.json"
                assert main(["grade", str(here / "subs"), *common, "--shard",
                             f"{index}/{count}", "--json", str(part)]) == 0
                parts.append(str(part))
            assert main(["grade", "merge", *parts, *common,
                         "--json", str(here / f"m{count}.json"),
                         "--junit", str(here / f"m{count}.xml"),
                         "--csv", str(here / f"m{count}.csv")]) == 0
    yield here


@pytest.mark.parametrize("count", [1, 3, 7])
def test_shards_merge_to_the_reports_of_one_run(graded: Path, count: int) -> None:
    one = normalised_json(graded / "one.json")
    assert one["summary"]["submissions"] == 24 - len(HANGS) and "zoe" in one["students"]
    assert {"pass", "fail", "error", "not_gradable"} == {e["status"] for e in one["submissions"]}
    assert normalised_json(graded / f"m{count}.json") == one
    assert normalised_junit(graded / f"m{count}.xml") == normalised_junit(graded / "one.xml")
    assert (graded / f"m{count}.csv").read_bytes() == (graded / "one.csv").read_bytes()


def test_each_student_is_graded_in_exactly_one_shard(graded: Path) -> None:
    seen: dict[str, int] = {}
    for index in range(1, 8):
        part = json.loads((graded / f"part-{index}-of-7.json").read_text(encoding="utf-8"))
        assert part["shard"]["index"] == index and part["shard"]["count"] == 7
        for student in {e["student"] for e in part["submissions"]} | set(part["students"]):
            assert student not in seen, f"{student} in shards {seen.get(student)} and {index}"
            seen[student] = index
            assert shard_of(student, 7) == index
    assert len(seen) == 12


def test_merge_refuses_a_missing_or_doubled_part(graded: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    parts = [str(graded / f"part-{i}-of-3.json") for i in (1, 2)]
    assert main(["grade", "merge", *parts, "--json", str(graded / "bad.json")]) == 2
    assert "shard 3/3 missing" in capsys.readouterr().err
    assert main(["grade", "merge", parts[0], parts[0], str(graded / "part-3-of-3.json"),
                 "--json", str(graded / "bad.json")]) == 2
    assert "are both shard 1/3" in capsys.readouterr().err
    assert main(["grade", "merge", str(graded / "one.json"), "--json",
                 str(graded / "bad.json")]) == 2
    assert "is not a part" in capsys.readouterr().err
    assert not (graded / "bad.json").exists()


def test_shard_of_is_stable_and_spreads() -> None:
    # sha256, not Python's salted hash(): the same on every machine of a job array
    assert [shard_of(name, 4) for name in ("ana", "bo", "chen", "张伟")] == [
        shard_of(name, 4) for name in ("ana", "bo", "chen", "张伟")]
    counts = [0] * 8
    for i in range(800):
        counts[shard_of(f"student{i}", 8) - 1] += 1
    assert min(counts) > 60


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_bad_shard_values(text: str) -> None:
    with pytest.raises(ShardError):
        parse_shard(text)


def test_shard_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "subs" / "ana").mkdir(parents=True)
    (tmp_path / "subs" / "ana" / "first-gradient.py").write_text("import torch\n",
                                                                  encoding="utf-8")
    subs = str(tmp_path / "subs")
    assert main(["grade", subs, "--shard", "2/1", "--json", str(tmp_path / "p.json")]) == 2
    assert "K must be from 1 to N" in capsys.readouterr().err
    assert main(["grade", subs, "--shard", "1/2"]) == 2
    assert "--shard writes its part with --json" in capsys.readouterr().err
    assert main(["grade", "merge", str(tmp_path / "none.json"), "--json",
                 str(tmp_path / "m.json")]) == 2
    assert "cannot be read" in capsys.readouterr().err
    assert main(["grade", "merge", str(tmp_path / "none.json")]) == 2
    assert "give --json, --junit or --csv" in capsys.readouterr().err
