"""Shared fixtures for the whole test suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tutor.sandbox import Sandbox


@pytest.fixture(scope="session", autouse=True)
def _own_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite's own user data directory (XDG_DATA_HOME), empty: every command speaks the
    language saved in the app there, so a learner's own choice must not reach the tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        yield


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """One warm sandbox shared by every test of the session, closed at the end."""
    box = Sandbox()
    box.start()
    try:
        yield box
    finally:
        box.close()
