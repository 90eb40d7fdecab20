"""pydantic's messages inside Chinese lint lines (issue 22 #5), by error type."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutor.validation_zh import ZH_BY_TYPE, zh_message


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    count: int = Field(ge=1)
    kind: Literal["code", "fix"]
    tags: list[str] = Field(default_factory=list, max_length=2)


def errors(**data: object) -> list[dict]:
    with pytest.raises(ValidationError) as caught:
        Model.model_validate(data)
    return caught.value.errors(include_url=False)


def test_common_errors_in_chinese() -> None:
    found = {e["loc"][0]: zh_message(e)
             for e in errors(name=3, count=0, kind="quiz", tags=["a", "b", "c"])}
    assert found == {"name": "应为字符串", "count": "应大于或等于 1",
                     "kind": "应为 'code' 或 'fix'", "tags": "最多只能有 2 项"}
    for message in found.values():
        assert not any("a" <= c <= "z" for c in message.replace("code", "").replace("fix", ""))


def test_unknown_type_keeps_the_english() -> None:
    error = {"type": "something_new", "msg": "Input is odd", "ctx": {}}
    assert zh_message(error) == "Input is odd"
    assert zh_message({"type": "greater_than", "msg": "Input should be > 2"}) == \
        "Input should be > 2"  # no ctx: nothing to fill in
    assert "literal_error" in ZH_BY_TYPE
