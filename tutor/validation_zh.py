"""pydantic's validation messages in Chinese, chosen by pydantic's stable error ``type``
(``string_type``, ``literal_error``...) and filled from the error's ``ctx``: never by
matching pydantic's English. A type not listed here keeps pydantic's English message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ZH_BY_TYPE: dict[str, str] = {
    "string_type": "应为字符串",
    "int_type": "应为整数",
    "int_parsing": "应为整数",
    "int_from_float": "应为整数（不能有小数部分）",
    "float_type": "应为数字",
    "float_parsing": "应为数字",
    "bool_type": "应为布尔值（true 或 false）",
    "bool_parsing": "应为布尔值（true 或 false）",
    "list_type": "应为列表",
    "tuple_type": "应为列表",
    "dict_type": "应为映射（键: 值）",
    "model_type": "应为映射（键: 值）",
    "model_attributes_type": "应为映射（键: 值）",
    "dataclass_type": "应为映射（键: 值）",
    "none_required": "应为空（null）",
    "literal_error": "应为 {expected}",
    "enum": "应为 {expected}",
    "greater_than": "应大于 {gt}",
    "greater_than_equal": "应大于或等于 {ge}",
    "less_than": "应小于 {lt}",
    "less_than_equal": "应小于或等于 {le}",
    "string_too_short": "至少需要 {min_length} 个字符",
    "string_too_long": "最多只能有 {max_length} 个字符",
    "too_short": "至少需要 {min_length} 项",
    "too_long": "最多只能有 {max_length} 项",
    "string_pattern_mismatch": "应符合模式 '{pattern}'",
    "value_error": "值有误：{error}",
    "assertion_error": "断言失败：{error}",
    "missing": "缺少这个字段",
    "extra_forbidden": "不允许有这个字段",
}


def zh_message(error: Mapping[str, Any]) -> str:
    """The Chinese of one pydantic error (an item of ``ValidationError.errors()``); its
    English ``msg`` where the type is not known or its context lacks a value."""
    template = ZH_BY_TYPE.get(str(error.get("type", "")))
    english = str(error.get("msg", ""))
    if template is None:
        return english
    ctx = {key: str(value) for key, value in dict(error.get("ctx") or {}).items()}
    if ctx.get("expected"):
        ctx["expected"] = ctx["expected"].replace(" or ", " 或 ")
    try:
        return template.format(**ctx)
    except (KeyError, IndexError):
        return english
