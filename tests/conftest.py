"""Shared fixtures for the whole test suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tutor.sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """One warm sandbox shared by every test of the session, closed at the end."""
    box = Sandbox()
    box.start()
    try:
        yield box
    finally:
        box.close()
