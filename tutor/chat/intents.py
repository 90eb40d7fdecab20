"""What a question asks for beyond its topic: the solution, or something about the learner's
own run. Patterns live in ``intents.yaml``."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from ruamel.yaml import YAML

INTENTS_PATH = Path(__file__).with_name("intents.yaml")


class Intents(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    solution_request: list[str]
    about_my_run: list[str]


@lru_cache(maxsize=1)
def _compiled() -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    data = Intents.model_validate(YAML(typ="safe").load(INTENTS_PATH.read_text(encoding="utf-8")))

    def compile_all(patterns: list[str]) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in patterns]

    return compile_all(data.solution_request), compile_all(data.about_my_run)


def asks_for_solution(question: str) -> bool:
    return any(p.search(question) for p in _compiled()[0])


def about_my_run(question: str) -> bool:
    return any(p.search(question) for p in _compiled()[1])
