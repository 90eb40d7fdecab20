"""Records: plain frozen dataclasses that pydantic validates, dumps and describes on demand.

The lesson format and bilingual texts are records rather than pydantic models because the
TUI's first screen is drawn from them: importing pydantic and building its validators costs
~0.2 s, a fifth of the start-up budget, and a cached course needs no validation (see
:mod:`tutor.course.cache`). Pydantic stays the one source of truth for the format: it
validates lesson YAML into these classes and derives the JSON Schema from them, the first
time either is asked for.

A record declares pydantic's field options as ``dataclasses.field(metadata={...})`` (pydantic
reads the ``Field`` arguments there) and type-level ones as ``Annotated[T, Deferred(make)]``;
neither imports pydantic. :class:`Record` gives records the part of pydantic's model API the
code uses (``model_validate``, ``model_dump``, ``model_copy``, ...), with the same meaning.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

if TYPE_CHECKING:
    from pydantic import TypeAdapter

R = TypeVar("R", bound="Record")


class Deferred:
    """A pydantic annotation made on first use: ``Annotated[T, Deferred(make)]`` validates as
    ``Annotated[T, make()]``, where ``make`` returns an annotation with its own
    ``__get_pydantic_core_schema__`` (``BeforeValidator``, ``Discriminator``...)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return self._make().__get_pydantic_core_schema__(source, handler)


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}
"""One adapter per record class (two threads may build one twice: the same either way)."""
_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter  # here: pydantic loads on first validation

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def _describe(schema: dict[str, Any], cls: type) -> None:
    # The class's docstring describes it in the JSON Schema, as a pydantic model's does
    # (pydantic < 2.12 leaves a plain dataclass's out; dataclass makes one up when the class
    # has none, starting with its signature).
    doc = cls.__doc__
    if doc and not doc.startswith(f"{cls.__name__}("):
        schema.setdefault("description", inspect.cleandoc(doc))


class Record:
    """The base of records: unknown keys are errors, dumps use each field's alias (so a dump
    reads back as the YAML it came from)."""

    __pydantic_config__: ClassVar[Mapping[str, Any]] = {
        "extra": "forbid", "json_schema_extra": _describe,
    }

    @classmethod
    def model_validate(cls: type[R], data: Any) -> R:
        """``data`` (plain Python: dicts, lists, strings...) validated into this record;
        raises ``pydantic.ValidationError``."""
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return _adapter(cls).json_schema(by_alias=True)

    def model_dump(self, *, mode: Literal["python", "json"] = "python",
                   exclude_none: bool = False) -> Any:
        return _adapter(type(self)).dump_python(self, mode=mode, by_alias=True,
                                                exclude_none=exclude_none)

    def model_dump_json(self) -> str:
        return _adapter(type(self)).dump_json(self, by_alias=True).decode("utf-8")

    def model_copy(self: R, *, update: Mapping[str, Any] | None = None) -> R:
        """A copy with some fields replaced, not validated (as pydantic's ``model_copy``)."""
        # Every record is a dataclass; mypy cannot see that through the TypeVar's bound.
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]


TAG = "__record__"
"""The key that names an object's record class in :func:`to_json`'s JSON."""


def _tag(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _encode(value: Any) -> dict[str, Any]:
    if isinstance(value, Record) and dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {TAG: _tag(type(value)), **fields}
    raise TypeError(f"not a record: {type(value).__name__}")


def to_json(value: Any) -> str:
    """``value`` (records, and lists and dicts of them) as JSON, each record tagged with its
    class: what a cache keeps of validated records, read back by :func:`from_json` without
    pydantic (and a fingerprint of their content). Raises ``TypeError`` or ``ValueError``
    for what JSON cannot hold."""
    return json.dumps(value, default=_encode, ensure_ascii=False)


def _record_classes() -> dict[str, type[Record]]:
    found: dict[str, type[Record]] = {}
    todo: list[type[Record]] = [Record]
    while todo:
        for sub in todo.pop().__subclasses__():
            found[_tag(sub)] = sub
            todo.append(sub)
    return found


def from_json(text: str | bytes) -> Any:
    """What :func:`to_json` wrote, its records built again without validation (they were
    validated before they were written); only record classes already imported are ever
    built. Raises ``ValueError``, ``KeyError`` or ``TypeError`` for JSON it did not write."""
    classes = _record_classes()

    def decode(obj: dict[str, Any]) -> Any:
        tag = obj.pop(TAG, None)
        return obj if tag is None else classes[tag](**obj)

    return json.loads(text, object_hook=decode)


def field_types(cls: type) -> dict[str, Any]:
    """A record's fields and their types (``Annotated`` kept), in declaration order."""
    found = _FIELD_TYPES.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls, include_extras=True)
        found = _FIELD_TYPES[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return found


def is_record(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Record)


def check_options(options: Mapping[str, object], declared: Any, where: str) -> None:
    """Raise ``TypeError`` for a keyword ``options`` has that the TypedDict ``declared`` does
    not, or lacks that it requires: ``**options: Unpack[...]`` is checked by the type checker
    only, and a misspelled option (``timout=``) must not be ignored at run time."""
    unknown = sorted(set(options) - declared.__required_keys__ - declared.__optional_keys__)
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s): {', '.join(unknown)}")
    missing = sorted(declared.__required_keys__ - set(options))
    if missing:
        raise TypeError(f"{where}() missing required keyword argument(s): {', '.join(missing)}")
