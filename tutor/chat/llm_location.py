"""Where the optional LLM's configuration lives, and whether there is one: cheap enough for
``tutor ask`` to check before it decides to answer from the answer cards alone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def config_path(env: Mapping[str, str] = os.environ) -> Path:
    if env.get("TUTOR_LLM_CONFIG"):
        return Path(env["TUTOR_LLM_CONFIG"])
    from platformdirs import user_config_dir

    return Path(user_config_dir("autograd-tutor")) / "llm.yaml"


def llm_configured(env: Mapping[str, str] = os.environ) -> bool:
    """Whether an LLM endpoint is configured (by environment or file), valid or not."""
    if env.get("TUTOR_LLM_BASE_URL") or env.get("TUTOR_LLM_MODEL"):
        return True
    return config_path(env).is_file()
