"""`tutor serve` over plain HTTP (no browser needed): the name form, the learner's page and
what a name may be."""

from __future__ import annotations

import argparse
import shlex
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser import free_port, start_server

from tutor.cli.serve_cmd import app_command, valid_name


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def get(url: str) -> tuple[int, str, dict[str, str]]:
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8"), dict(error.headers)


@pytest.mark.slow
def test_the_pages(tmp_path: Path) -> None:
    port = free_port()
    server = start_server(tmp_path / "users", port)
    base = f"http://127.0.0.1:{port}"
    try:
        status, body, _ = get(f"{base}/")
        assert status == 200 and 'name="user"' in body and "你的名字" in body
        status, _, headers = get(f"{base}/?user=%E5%BC%A0%E4%BC%9F")  # 张伟
        assert status == 302 and headers["Location"] == "/u/%E5%BC%A0%E4%BC%9F"
        status, body, _ = get(f"{base}/u/%E5%BC%A0%E4%BC%9F")
        assert status == 200
        assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws/%E5%BC%A0%E4%BC%9F"' in body
        for bad in ("..", ".hidden", "a%2Fb", "x" * 65, "a%20b"):
            assert get(f"{base}/?user={bad}")[0] == 400, bad
            assert get(f"{base}/u/{bad}")[0] in (400, 404), bad
        status, body, _ = get(f"{base}/?user=%3Cscript%3E")
        assert status == 400 and "<script>" not in body  # the name is escaped back
    finally:
        server.terminate()
        server.wait(30)


def test_the_command_is_the_terminal_app_with_the_learners_data(tmp_path: Path) -> None:
    args = argparse.Namespace(lang="zh", lessons=Path("/my course"), device="auto")
    argv = shlex.split(app_command(args, tmp_path, "张伟"))
    assert argv == [sys.executable, "-m", "tutor", "--data-dir", str(tmp_path / "张伟"),
                    "--lang", "zh", "--lessons", "/my course"]
    with pytest.raises(ValueError):
        app_command(args, tmp_path, "a; rm -rf ~")


@pytest.mark.parametrize("name, ok", [("alice", True), ("张伟", True), ("a.b-c_d", True),
                                      ("..", False), ("../x", False), (".x", False),
                                      ("a b", False), ("", False), ("x" * 65, False)])
def test_names(name: str, ok: bool) -> None:
    assert valid_name(name) is ok
