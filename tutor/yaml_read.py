"""Reading YAML as plain data, safely: libyaml's parser (PyYAML), YAML 1.2's core schema,
limits, and the line and column of every node.

libyaml (C) tokenises and parses; the data is built here from its event stream rather than
by PyYAML's constructors, which is what makes every limit natural: an alias bomb is refused
when its expansion passes :data:`MAX_NODES` (and after :data:`MAX_ALIASES` aliases), deep
nesting at :data:`MAX_DEPTH`, an unknown tag (``!!python/object``, ``!custom``) where it
stands, a number of more than :data:`MAX_INT_DIGITS` digits, a duplicate key at the second
one; the building itself is a loop, never a recursion. Plain scalars are read as YAML 1.2
does (``yes``/``no``/``on``/``off`` are text), and each such word is reported as a warning,
since a YAML 1.1 reader would see a boolean there.

:func:`read_yaml` reads one of the app's own data files (message catalogs, the diagnosis
catalog, the chat's data); lessons go through :func:`parse`, whose positions their
problems need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.i18n import T, Text

MAX_BYTES = 2_000_000
"""A larger file is refused unread (the largest lesson is ~40 kB)."""
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_NODES = 200_000
"""Scalars and collections, aliases expanded: far above any lesson, far below a bomb."""
MAX_INT_DIGITS = 100

Loc = tuple[Any, ...]

_CORE = "tag:yaml.org,2002:"
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
         "FALSE": False}
_YAML11_BOOLS = frozenset(
    ["yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"]
)
_INT = re.compile(r"^[-+]?[0-9][0-9_]*$")
_INT_OCT = re.compile(r"^[-+]?0o[0-7_]+$")
_INT_HEX = re.compile(r"^[-+]?0x[0-9a-fA-F_]+$")
_FLOAT = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?)$"
)
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


class YamlProblem(Exception):
    """The text is not YAML this reader accepts; ``line``/``col`` are 1-based."""

    def __init__(self, line: int, col: int, text: Text, *, syntax: str | None = None) -> None:
        super().__init__(f"{line}:{col}: {text.en}")
        self.line, self.col, self.text = line, col, text
        self.syntax = syntax
        """For a syntax error: libyaml's own words (the caller words the message)."""


class YamlFileError(ValueError):
    """A data file that is not YAML this reader takes; ``str()`` is ``path:line:col: why``."""

    def __init__(self, path: Path, line: int, col: int, text: Text) -> None:
        super().__init__(f"{path}:{line}:{col}: {text.en}")
        self.path, self.line, self.col, self.text = path, line, col, text


@dataclass
class Parsed:
    data: Any
    positions: dict[Loc, tuple[int, int, int | None, int | None]] = field(default_factory=dict)
    """loc -> (line, col, key line, key col) of each node, 1-based; a mapping entry whose
    value is a collection is placed at its key, as authors look for it there."""
    warnings: list[tuple[int, int, Text]] = field(default_factory=list)


def _at(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def too_large(size: int) -> Text:
    return T(f"the file is {size / 1e6:.1f} MB; a YAML file here may be at most "
             f"{MAX_BYTES // 1_000_000} MB",
             f"文件大小为 {size / 1e6:.1f} MB；这里的 YAML 文件最大为 {MAX_BYTES // 1_000_000} MB")


def decode(raw: bytes) -> str:
    """UTF-8 text (a BOM dropped); ``YamlProblem`` when too large; UnicodeDecodeError."""
    if len(raw) > MAX_BYTES:
        raise YamlProblem(1, 1, too_large(len(raw)))
    return raw.decode("utf-8-sig")


def _number(text: str, mark: Any) -> int:
    digits = text.lstrip("+-").replace("_", "")
    if len(digits) > MAX_INT_DIGITS:
        line, col = _at(mark)
        raise YamlProblem(line, col, T(
            f"a number of {len(digits)} digits; at most {MAX_INT_DIGITS} are read",
            f"数字有 {len(digits)} 位；最多读取 {MAX_INT_DIGITS} 位"))
    sign = -1 if text.startswith("-") else 1
    if _INT_HEX.match(text):
        return sign * int(digits[2:], 16)
    if _INT_OCT.match(text):
        return sign * int(digits[2:], 8)
    return sign * int(digits)


def _plain(text: str, mark: Any, warnings: list[tuple[int, int, Text]]) -> Any:
    """A plain (unquoted) scalar by YAML 1.2's core schema."""
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text) or _INT_OCT.match(text) or _INT_HEX.match(text):
        return _number(text, mark)
    if _FLOAT.match(text):
        if len(text) > MAX_INT_DIGITS * 4:
            return _number(text, mark)  # refused: too many digits
        return float(text.replace("_", ""))
    if _INF.match(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.match(text):
        return float("nan")
    if text in _YAML11_BOOLS:
        line, col = _at(mark)
        quoted = f"'{text}'"
        warnings.append((line, col, T(
            f"`{text}` is the text {quoted} here (YAML 1.2), but a boolean to YAML 1.1 "
            f"readers: write true/false for a boolean, or {quoted} in quotes for text",
            f"`{text}` 在这里是文本 {quoted}（YAML 1.2），但 YAML 1.1 的读取器会把它当作布尔值："
            f"布尔值请写 true/false，文本请加引号写成 {quoted}")))
    return text


def _tagged(tag: str, text: str, mark: Any, warnings: list[tuple[int, int, Text]]) -> Any:
    """A scalar with an explicit core tag (``!!str 3``)."""
    if tag == _CORE + "str":
        return text
    value = _plain(text, mark, warnings)
    kinds = {"int": int, "float": (float, int), "bool": bool, "null": type(None)}
    wanted = kinds.get(tag.removeprefix(_CORE)) if tag.startswith(_CORE) else None
    if wanted is None:
        raise _unknown_tag(tag, mark)
    if not isinstance(value, wanted) or (tag.endswith(":int") and isinstance(value, bool)):
        line, col = _at(mark)
        raise YamlProblem(line, col, T(f"{text!r} is not a valid {tag.removeprefix(_CORE)}",
                                       f"{text!r} 不是有效的 {tag.removeprefix(_CORE)}"))
    return float(value) if tag.endswith(":float") else value


def _unknown_tag(tag: str, mark: Any) -> YamlProblem:
    line, col = _at(mark)
    shown = "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag
    return YamlProblem(line, col, T(
        f"unknown tag {shown}: only plain YAML data (text, numbers, lists, mappings) is read",
        f"未知的标签 {shown}：只读取普通的 YAML 数据（文本、数字、列表、映射）"))


class _Builder:
    """Plain data from an event stream, with positions, within the limits."""

    def __init__(self, positions: bool) -> None:
        self.keep_positions = positions
        self.parsed = Parsed(data=None)
        self.stack: list[dict[str, Any]] = []
        self.anchors: dict[str, Any] = {}
        self.open_anchors: set[str] = set()
        self.nodes = 0
        self.aliases = 0

    def _count(self, n: int, mark: Any) -> None:
        self.nodes += n
        if self.nodes > MAX_NODES:
            line, col = _at(mark)
            raise YamlProblem(line, col, T(
                f"more than {MAX_NODES} values once aliases are expanded (an alias bomb?)",
                f"展开别名后超过 {MAX_NODES} 个值（别名炸弹？）"))

    def _expand(self, value: Any, mark: Any) -> Any:
        """A copy of an anchored value, counted against the limit (a loop, not recursion)."""
        if not isinstance(value, (dict, list)):
            self._count(1, mark)
            return value
        root: Any = {} if isinstance(value, dict) else []
        work = [(value, root)]
        while work:
            source, target = work.pop()
            self._count(1, mark)
            items = source.items() if isinstance(source, dict) else enumerate(source)
            for key, item in items:
                copy: Any = item
                if isinstance(item, (dict, list)):
                    copy = {} if isinstance(item, dict) else []
                    work.append((item, copy))
                else:
                    self._count(1, mark)
                if isinstance(target, dict):
                    target[key] = copy
                else:
                    target.append(copy)
        return root

    def _attach(self, value: Any, start: Any, collection: bool) -> None:
        """Give ``value`` to the open collection (as a key or a value), or make it the root."""
        if not self.stack:
            self.parsed.data = value
            if self.keep_positions:
                self.parsed.positions[()] = (*_at(start), None, None)
            return
        frame = self.stack[-1]
        if frame["kind"] == "seq":
            loc = (*frame["loc"], len(frame["data"]))
            frame["data"].append(value)
            if self.keep_positions:
                self.parsed.positions[loc] = (*_at(start), None, None)
            return
        if frame["key"] is _NO_KEY:
            if collection:
                line, col = _at(start)
                raise YamlProblem(line, col, T("a list or a mapping as a mapping key",
                                               "列表或映射不能作为映射的键"))
            key = value if isinstance(value, (str, int)) else str(value)
            first = frame["seen"].get(key)
            if first is not None:
                line, col = _at(start)
                raise YamlProblem(line, col, T(
                    f"duplicate key {key!r} (first on line {first})",
                    f"重复的键 {key!r}（第一次出现在第 {first} 行）"))
            frame["seen"][key] = _at(start)[0]
            frame["key"], frame["key_mark"] = key, start
            return
        key, key_mark = frame["key"], frame["key_mark"]
        frame["key"] = _NO_KEY
        if key == "<<" and frame["merge_ok"]:
            frame["merges"].append(value)
            return
        frame["data"][key] = value
        if self.keep_positions:
            key_line, key_col = _at(key_mark)
            line, col = (key_line, key_col) if collection else _at(start)
            self.parsed.positions[(*frame["loc"], key)] = (line, col, key_line, key_col)

    def _loc_of_next(self) -> Loc:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if frame["kind"] == "seq":
            return (*frame["loc"], len(frame["data"]))
        return (*frame["loc"], frame["key"])

    def scalar(self, event: Any) -> None:
        self._count(1, event.start_mark)
        tag = event.tag
        if tag in (None, "!") and event.style in (None, "", "plain") and event.implicit[0]:
            value = _plain(event.value, event.start_mark, self.parsed.warnings)
        elif tag in (None, "!"):
            value = event.value
        else:
            value = _tagged(tag, event.value, event.start_mark, self.parsed.warnings)
        is_key = bool(self.stack) and self.stack[-1]["kind"] == "map" and (
            self.stack[-1]["key"] is _NO_KEY)
        if is_key and value == "<<" and event.style in (None, "") and tag in (None, "!"):
            self.stack[-1]["merge_ok"] = True
        elif is_key:
            self.stack[-1]["merge_ok"] = False
        if event.anchor:
            self.anchors[event.anchor] = value
        self._attach(value, event.start_mark, False)

    def start(self, event: Any, kind: str) -> None:
        if len(self.stack) >= MAX_DEPTH:
            line, col = _at(event.start_mark)
            raise YamlProblem(line, col, T(
                f"nested more than {MAX_DEPTH} levels deep",
                f"嵌套超过 {MAX_DEPTH} 层"))
        tag = event.tag
        if tag not in (None, "!", _CORE + kind):
            raise _unknown_tag(tag, event.start_mark)
        self._count(1, event.start_mark)
        data: Any = {} if kind == "map" else []
        loc = self._loc_of_next()
        self._attach(data, event.start_mark, True)
        self.stack.append({"kind": kind, "data": data, "loc": loc, "key": _NO_KEY,
                           "key_mark": None, "seen": {}, "merges": [], "merge_ok": False,
                           "anchor": event.anchor})
        if event.anchor:
            self.anchors[event.anchor] = data
            self.open_anchors.add(event.anchor)

    def end(self, event: Any) -> None:
        frame = self.stack.pop()
        if frame["anchor"]:
            self.open_anchors.discard(frame["anchor"])
        for merged in frame["merges"]:
            for source in merged if isinstance(merged, list) else [merged]:
                if not isinstance(source, dict):
                    line, col = _at(event.start_mark)
                    raise YamlProblem(line, col, T("<< merges mappings only",
                                                   "<< 只能合并映射"))
                for key, value in source.items():
                    frame["data"].setdefault(key, value)

    def alias(self, event: Any) -> None:
        self.aliases += 1
        line, col = _at(event.start_mark)
        if self.aliases > MAX_ALIASES:
            raise YamlProblem(line, col, T(
                f"more than {MAX_ALIASES} aliases (*name); write the values out",
                f"别名（*name）超过 {MAX_ALIASES} 个；请直接写出这些值"))
        name = event.anchor
        if name in self.open_anchors:
            raise YamlProblem(line, col, T(f"alias *{name} inside its own anchor",
                                           f"别名 *{name} 出现在它自己的锚点之内"))
        if name not in self.anchors:
            raise YamlProblem(line, col, T(f"alias *{name} names no anchor &{name}",
                                           f"别名 *{name} 没有对应的锚点 &{name}"))
        value = self._expand(self.anchors[name], event.start_mark)
        frame = self.stack[-1] if self.stack else None
        if frame is not None and frame["kind"] == "map" and frame["key"] is _NO_KEY:
            raise YamlProblem(line, col, T("an alias as a mapping key", "别名不能作为映射的键"))
        self._attach(value, event.start_mark, isinstance(value, (dict, list)))


_NO_KEY = object()


def parse(text: str, *, positions: bool = True) -> Parsed:
    """The data of one YAML document (an empty one is ``None``); ``YamlProblem`` for text
    that is not YAML, or that passes a limit."""
    import yaml

    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # libyaml where installed
    builder = _Builder(positions)
    documents = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.ScalarEvent):
                builder.scalar(event)
            elif isinstance(event, yaml.MappingStartEvent):
                builder.start(event, "map")
            elif isinstance(event, yaml.SequenceStartEvent):
                builder.start(event, "seq")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                builder.end(event)
            elif isinstance(event, yaml.AliasEvent):
                builder.alias(event)
            elif isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    line, col = _at(event.start_mark)
                    raise YamlProblem(line, col, T(
                        "a second YAML document (---); a file holds one",
                        "出现第二个 YAML 文档（---）；一个文件只能有一个"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = _at(mark)
        what = " ".join(part for part in (exc.context, exc.problem) if part) or str(exc)
        raise YamlProblem(line, col, T(what, what), syntax=what) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, 1, T(str(exc), str(exc)), syntax=str(exc)) from None
    return builder.parsed


def load(text: str) -> Any:
    """The data of a YAML text, without positions."""
    return parse(text, positions=False).data


def read_yaml(path: Path) -> Any:
    """The data of the YAML file at ``path`` (plain types, as :func:`load`).

    ``OSError`` when the file cannot be read; :class:`YamlFileError` when it is not UTF-8,
    not YAML, or past a limit.
    """
    path = Path(path)
    with path.open("rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    try:
        return load(decode(raw))
    except YamlProblem as problem:
        raise YamlFileError(path, problem.line, problem.col, problem.text) from None
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line, col = before.count(b"\n") + 1, exc.start - before.rfind(b"\n")
        raise YamlFileError(path, line, col, T(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x})",
            f"不是 UTF-8 文本（字节 0x{raw[exc.start]:02x}）")) from None
