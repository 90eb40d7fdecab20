"""argparse's usage errors in the user's language.

argparse formats its errors in English before :meth:`ArgumentParser.error` sees them, so
the Chinese text is found by matching the English shapes below (those of Python 3.11-3.13);
a message no pattern knows stays English rather than being half translated.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

# (English pattern, Chinese template); groups named in the pattern fill the template.
ZH_MESSAGES: tuple[tuple[str, str], ...] = (
    (r"argument (?P<arg>.+?): (?P<inner>.+)", "参数 {arg}：{inner}"),
    (r"invalid (?P<type>\w+) value: (?P<value>.+)", "{value} 不是有效的{type}"),
    (r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)",
     "无效的选项 {value}（可选：{choices}）"),
    (r"unrecognized arguments: (?P<args>.+)", "无法识别的参数：{args}"),
    (r"the following arguments are required: (?P<args>.+)", "缺少必需的参数：{args}"),
    (r"one of the arguments (?P<args>.+) is required", "必须给出以下参数之一：{args}"),
    (r"expected one argument", "后面需要一个值"),
    (r"expected at most one argument", "后面最多只能有一个值"),
    (r"expected at least one argument", "后面至少需要一个值"),
    (r"not allowed with argument (?P<arg>.+)", "不能与参数 {arg} 同时使用"),
    (r"ignored explicit argument (?P<value>.+)", "不接受值 {value}"),
    (r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)",
     "选项 {option} 不明确，可能是：{matches}"),
)
ZH_TYPES = {"float": "数字", "int": "整数", "Path": "路径"}
"""Names argparse puts in 'invalid <type> value', said as a learner would."""
HEADINGS_ZH = {
    "positional arguments:": "位置参数：",
    "options:": "选项：",
    "optional arguments:": "选项：",  # Python 3.9's heading
}
"""argparse's fixed help headings (whole lines) in Chinese."""
HELP_ZH = {"show this help message and exit": "显示本帮助并退出"}
USAGE = {"en": "usage: ", "zh": "用法： "}  # both 7 columns wide: wrapped lines stay aligned
ERROR = {"en": "error", "zh": "错误"}


def translate(message: str, lang: str) -> str:
    """``message`` (an argparse error, in English) in ``lang``; unknown shapes stay English."""
    if lang != "zh":
        return message
    for pattern, template in ZH_MESSAGES:
        match = re.fullmatch(pattern, message, flags=re.DOTALL)
        if match is None:
            continue
        values = match.groupdict()
        if "inner" in values:
            values["inner"] = translate(values["inner"], lang)
        if "type" in values:
            values["type"] = ZH_TYPES.get(values["type"], f" {values['type']} 值")
        return template.format(**values)
    return message


def lang_from_argv(argv: Sequence[str]) -> str | None:
    """The ``--lang`` the command line asks for (the last one wins, as in parsing), or None:
    the parser fails before it has a namespace to ask."""
    lang = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            lang = argv[i + 1]
        elif arg.startswith("--lang="):
            lang = arg.partition("=")[2]
    return lang if lang in ("en", "zh") else None


class TutorArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors speak ``error_lang`` (None: TUTOR_LANG, then the
    locale). Subparsers made by :meth:`add_subparsers` inherit the language."""

    def __init__(self, *args: object, error_lang: str | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.error_lang = error_lang

    def add_subparsers(self, **kwargs: object) -> argparse._SubParsersAction:  # type: ignore[type-arg]
        lang = self.error_lang

        def make(**sub_kwargs: object) -> TutorArgumentParser:
            return TutorArgumentParser(error_lang=lang, **sub_kwargs)

        kwargs.setdefault("parser_class", make)
        return super().add_subparsers(**kwargs)  # type: ignore[arg-type]

    def help_lang(self) -> str:
        """The language of help and usage errors."""
        return self._lang()

    def _lang(self) -> str:
        if self.error_lang is not None:
            return self.error_lang
        from tutor.i18n import default_lang

        return default_lang()

    def format_help(self) -> str:
        text = super().format_help()
        if self._lang() != "zh":
            return text
        if text.startswith(USAGE["en"]):
            text = USAGE["zh"] + text[len(USAGE["en"]):]
        lines = [HEADINGS_ZH.get(line, line) for line in text.split("\n")]
        text = "\n".join(lines)
        for english, chinese in HELP_ZH.items():
            text = text.replace(english, chinese)
        return text

    def error(self, message: str) -> NoReturn:
        lang = self._lang()
        usage = self.format_usage()
        if lang in USAGE and usage.startswith(USAGE["en"]):
            usage = USAGE[lang] + usage[len(USAGE["en"]):]
        sys.stderr.write(usage)
        self.exit(2, f"{self.prog}: {ERROR.get(lang, 'error')}: {translate(message, lang)}\n")
