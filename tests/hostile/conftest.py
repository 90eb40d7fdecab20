"""Fixtures of the hostile-code suite: the secrets a teacher's machine holds, and a confined
sandbox whose parent holds an LLM key (helpers: run_cases.py)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_cases import SECRET, Secrets

from tutor.sandbox import Sandbox


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Secrets:
    root = tmp_path_factory.mktemp("teacher")
    texts: dict[str, str] = {}

    def plant(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"secret-{secrets.token_hex(8)}"
        path.write_text(text)
        path.chmod(0o644)
        texts[str(path)] = text

    course, cache, checkout = root / "course", root / "cache", root / "checkout"
    plant(course / "01-lesson.yaml")
    plant(cache / "expected" / "values.json")
    plant(checkout / ".git" / "objects" / "ab" / "solution")
    plant(root / "class" / "bob" / "fix-scalar.py")
    for folder in (root, course, cache, checkout, root / "class", root / "class" / "bob"):
        folder.chmod(0o755)
    return Secrets(course, cache, checkout, root / "class" / "bob", texts)


@pytest.fixture(scope="session")
def hostile_sandbox(planted: Secrets) -> Iterator[Sandbox]:
    previous = os.environ.get("TUTOR_LLM_API_KEY")
    os.environ["TUTOR_LLM_API_KEY"] = SECRET
    box = Sandbox(hide=[planted.course, planted.cache, planted.other_student.parent])
    try:
        if not box.confinement().confined:
            pytest.skip(f"the kernel gives no namespaces here: {box.confinement().reason}")
        yield box
    finally:
        box.close()
        if previous is None:
            os.environ.pop("TUTOR_LLM_API_KEY", None)
        else:
            os.environ["TUTOR_LLM_API_KEY"] = previous


