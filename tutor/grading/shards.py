"""Sharded grading: a stable share of a class per process, and the merge of the parts.

A class is split by student, never by file, so each student's work is graded in one part and
the gradebook's row of that student comes from one place. The share is a hash of the student
folder's name (sha256, not Python's salted ``hash``), so every machine of a Slurm array, a
Kubernetes Indexed Job or a CI matrix computes the same split without talking to the others.

A part is a version-1 grading report with one more field, ``shard``: which share it is, of how
many, and a digest of the whole class's roster, so :func:`merge` can refuse parts that overlap,
leave a share out, or were graded from different snapshots of the submissions. The merged
report is built with the same functions as one run's (:func:`~tutor.grading.reports.summarize`
over every entry and student), so its totals, missing pairs, JUnit and CSV are those of one run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutor.errors import TutorError
from tutor.grading.reports import GradeReport, SubmissionEntry, build_report, roster
from tutor.i18n import T

if TYPE_CHECKING:
    from tutor.grading.batch import Submission

SHARD_PATTERN = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(TutorError):
    """A --shard value or a set of parts that cannot be merged."""


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based: shard K of N (Slurm's and a CI matrix's numbering start at 1 or are shifted)."""
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``K/N`` with 1 <= K <= N."""
    match = SHARD_PATTERN.match(text)
    if match is None:
        raise ShardError(
            T(f"--shard {text!r}: write K/N, e.g. 2/8 for the second of eight parts",
              f"--shard {text!r}：请写成 K/N，例如 2/8 表示八份中的第二份"),
            hint=T("in a Slurm array started with --array=1-8: --shard $SLURM_ARRAY_TASK_ID/8",
                   "在用 --array=1-8 启动的 Slurm 作业数组中：--shard $SLURM_ARRAY_TASK_ID/8"),
        )
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ShardError(T(f"--shard {text}: K must be from 1 to N (and N at least 1)",
                           f"--shard {text}：K 必须在 1 到 N 之间（N 至少为 1）"))
    return Shard(index, count)


def shard_of(student: str, count: int) -> int:
    """The 1-based share a student belongs to; the same on every machine and Python."""
    digest = hashlib.sha256(student.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def roster_digest(students: Iterable[str]) -> str:
    """Of the whole class's sorted roster: parts graded from other snapshots differ."""
    return hashlib.sha256("\n".join(sorted(set(students))).encode("utf-8")).hexdigest()


def select(
    submissions: Sequence[Submission], students: Sequence[str], shard: Shard
) -> tuple[list[Submission], list[str]]:
    """This shard's submissions and student folders, in their given order."""
    mine = [s for s in submissions if shard_of(s.student, shard.count) == shard.index]
    folders = [s for s in students if shard_of(s, shard.count) == shard.index]
    return mine, folders


class ShardInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="K of --shard K/N (1-based).")
    count: int = Field(description="N of --shard K/N.")
    roster_sha256: str = Field(description="sha256 of the whole class's sorted student names.")
    class_students: int = Field(description="Students in the whole class (every part).")


class ShardReport(GradeReport):
    """One part: the version-1 report of this share, and which share it is."""

    shard: ShardInfo


def shard_report(report: GradeReport, shard: Shard, class_roster: Iterable[str]) -> ShardReport:
    everyone = sorted(set(class_roster))
    return ShardReport(
        **dict(report), shard=ShardInfo(index=shard.index, count=shard.count,
                                        roster_sha256=roster_digest(everyone),
                                        class_students=len(everyone)),
    )


def load_part(path: Path) -> ShardReport:
    try:
        return ShardReport.model_validate_json(Path(path).read_bytes())
    except OSError as exc:
        raise ShardError(T(f"{path}: cannot be read ({exc.strerror or exc})",
                           f"{path}：无法读取（{exc.strerror or exc}）")) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ShardError(
            T(f"{path} is not a part written by `tutor grade --shard K/N --json`: "
              f"{where}: {first['msg']}",
              f"{path} 不是 `tutor grade --shard K/N --json` 写出的分片结果："
              f"{where}：{first['msg']}"),
            hint=T("give the --json files of every shard", "请给出每个分片的 --json 文件"),
        ) from None


def _file_order(entry: SubmissionEntry) -> tuple[str, ...]:
    # one run grades in the order of sorted paths, which compares part by part
    return PurePosixPath(entry.file).parts


def merge(parts: Sequence[tuple[str, ShardReport]], *, created: str,
          order: Sequence[str] = ()) -> GradeReport:
    """The report one run over the whole class would have written (``created`` aside).

    ``parts``: (name for messages, part); ``order``: the course's exercises (the reports'
    order, as in one run). Refuses parts of other settings, other class
    snapshots, duplicates and missing shares, each with the parts it is about."""
    if not parts:
        raise ShardError(T("give the parts to merge: tutor grade merge PART.json...",
                           "请给出要合并的分片：tutor grade merge PART.json..."))
    first_name, first = parts[0]
    same = ("tool_version", "torch_version", "device", "lang")
    for name, part in parts[1:]:
        for field in same:
            if getattr(part, field) != getattr(first, field):
                mine, theirs = getattr(part, field), getattr(first, field)
                raise ShardError(T(
                    f"{name} was graded with {field} {mine!r}, {first_name} with {theirs!r}; "
                    "grade every shard the same way",
                    f"{name} 的 {field} 是 {mine!r}，{first_name} 的是 {theirs!r}；"
                    "每个分片都要用同样的设置评分"))
        if (part.shard.count, part.shard.roster_sha256) != (
                first.shard.count, first.shard.roster_sha256):
            raise ShardError(T(
                f"{name} is shard {part.shard.index}/{part.shard.count} of another class or "
                f"split than {first_name} ({first.shard.index}/{first.shard.count}): "
                "the submissions folder or N changed between the shards",
                f"{name}（{part.shard.index}/{part.shard.count}）和 {first_name}"
                f"（{first.shard.index}/{first.shard.count}）不是同一个班级或同一种划分："
                "分片之间提交目录或 N 变了"))
    seen: dict[int, str] = {}
    for name, part in parts:
        if part.shard.index in seen:
            raise ShardError(T(f"{name} and {seen[part.shard.index]} are both shard "
                               f"{part.shard.index}/{part.shard.count}",
                               f"{name} 和 {seen[part.shard.index]} 都是分片 "
                               f"{part.shard.index}/{part.shard.count}"))
        seen[part.shard.index] = name
    absent = [str(k) for k in range(1, first.shard.count + 1) if k not in seen]
    if absent:
        listed = ", ".join(f"{k}/{first.shard.count}" for k in absent)
        raise ShardError(
            T(f"shard {listed} missing: a merge needs every part",
              f"缺少分片 {listed}：合并需要所有分片"),
            hint=T("run the missing shards, or give their --json files",
                   "请运行缺少的分片，或给出它们的 --json 文件"),
        )
    entries = sorted((e for _, p in parts for e in p.submissions), key=_file_order)
    students = sorted({s for _, p in parts for s in p.students})
    unmatched = list(dict.fromkeys(u for _, p in parts for u in p.unmatched))
    if roster_digest(roster(entries, students)) != first.shard.roster_sha256:
        raise ShardError(T(
            "the parts do not add up to the class they were cut from (a part was graded "
            "from another copy of the submissions)",
            "这些分片合起来不是划分时的那个班级（某个分片评的是另一份提交目录）"))
    return build_report(
        entries, students=students, order=order, tool_version=first.tool_version,
        torch_version=first.torch_version, device=first.device, lang=first.lang,
        created=created, unmatched=unmatched,
    )
