"""``tutor serve``: the same app in a web browser, through textual-serve.

Every browser connection starts its own ``tutor`` process (textual-serve's ``AppService``),
with ``--data-dir USERS_DIR/<name>``: the name is the one the learner types on the first page,
or the one in the URL (``/u/<name>``), so each learner keeps their own progress. The process is
the terminal app itself, so its runs go through the same sandbox, confined the same way.
Bound to 127.0.0.1 unless ``--host`` says otherwise: there is no login, so anyone who can reach
the port can use any name.
"""

from __future__ import annotations

import argparse
import html
import re
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tutor.cli.common import add_device, add_lang, add_lessons, said
from tutor.errors import TutorError
from tutor.i18n import T

NAME = re.compile(r"^(?!\.)[\w.-]{1,64}$", re.UNICODE)
"""A learner's name: letters (any script), digits, ``_``, ``-`` and ``.``; it names a folder."""

FORM = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>autograd-tutor</title>
<style>
body {{ background: #0c181f; color: #e8eef2; font-family: sans-serif; display: flex;
       align-items: center; justify-content: center; height: 100vh; margin: 0; }}
form {{ background: #12232d; padding: 32px 40px; border-radius: 6px; }}
input {{ font-size: 18px; padding: 6px; margin: 12px 0; width: 100%; }}
button {{ font-size: 16px; padding: 8px 24px; }}
.error {{ color: #ff8a80; }}
</style></head><body>
<form method="get" action="/">
  <h1>autograd-tutor</h1>
  <label for="user">Your name · 你的名字</label><br>
  <input id="user" name="user" autofocus required maxlength="64" value="{value}"><br>
  <p class="error">{error}</p>
  <small>Your progress is kept under this name. · 学习进度按这个名字保存。</small><br><br>
  <button type="submit">Start · 开始</button>
</form></body></html>
"""
BAD_NAME = ("Use letters, digits, '-', '_' or '.' (at most 64), not starting with '.'. · "
            "请只用字母、数字、'-'、'_' 或 '.'（最多 64 个），且不能以 '.' 开头。")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help=said(parser, "serve.host"))
    parser.add_argument("--port", type=int, default=8000, help=said(parser, "serve.port"))
    parser.add_argument("--users-dir", type=Path, default=None, metavar="DIR",
                        help=said(parser, "serve.users_dir"))
    parser.add_argument("--title", default="autograd-tutor", help=said(parser, "serve.title"))
    add_lang(parser)
    add_lessons(parser)
    add_device(parser)


def valid_name(name: str) -> bool:
    return bool(NAME.match(name))


def app_command(args: argparse.Namespace, users_dir: Path, name: str) -> str:
    """The shell command one connection runs: the terminal app, with this learner's data."""
    if not valid_name(name):  # the name reaches a shell, quoted, and a path: checked twice
        raise ValueError(f"not a learner name: {name!r}")
    argv = [sys.executable, "-m", "tutor", "--data-dir", str(users_dir / name)]
    for option in ("lang", "lessons", "device"):
        value = getattr(args, option, None)
        if value is not None and not (option == "device" and value == "auto"):
            argv += [f"--{option}", str(value)]
    return shlex.join(argv)


def build_app(args: argparse.Namespace, users_dir: Path) -> Any:
    """The aiohttp application: the name form, a page per learner, a websocket per page."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import WSMsgType, web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    # textual-serve's own page, scripts and downloads; only the routes are ours, so that
    # the learner's name travels in the page's path and its websocket's.
    serve = Server(command="tutor", title=args.title)

    def origin(request: web.Request, websocket: bool = False) -> str:
        scheme = request.scheme
        if websocket:
            scheme = "wss" if scheme == "https" else "ws"
        return f"{scheme}://{request.host}"

    async def index(request: web.Request) -> web.StreamResponse:
        name = request.query.get("user")
        if name is None:
            return web.Response(text=FORM.format(value="", error=""), content_type="text/html")
        name = name.strip()
        if not valid_name(name):
            page = FORM.format(value=html.escape(name, quote=True), error=BAD_NAME)
            return web.Response(text=page, content_type="text/html", status=400)
        raise web.HTTPFound(f"/u/{quote(name)}")

    def learner(request: web.Request) -> str:
        name = request.match_info["user"]
        if not valid_name(name):
            raise web.HTTPBadRequest(text=BAD_NAME)
        return name

    async def page(request: web.Request) -> web.StreamResponse:
        name = learner(request)
        context = {
            "font_size": int(request.query.get("fontsize", "16"))
            if request.query.get("fontsize", "16").isdigit() else 16,
            "app_websocket_url": f"{origin(request, websocket=True)}/ws/{quote(name)}",
            "config": {"static": {"url": f"{origin(request)}/static/"}},
            "application": {"name": f"{args.title} · {name}"},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def websocket(request: web.Request) -> web.WebSocketResponse:
        name = learner(request)
        socket = web.WebSocketResponse(heartbeat=15)
        width = int(request.query.get("width", "80")) if request.query.get(
            "width", "80").isdigit() else 80
        height = int(request.query.get("height", "24")) if request.query.get(
            "height", "24").isdigit() else 24
        await socket.prepare(request)
        (users_dir / name).mkdir(parents=True, exist_ok=True)

        async def close() -> None:  # (the socket's close says whether it was open)
            await socket.close()

        service = AppService(
            app_command(args, users_dir, name), write_bytes=socket.send_bytes,
            write_str=socket.send_str, close=close,
            download_manager=serve.download_manager,
        )
        await service.start(width, height)
        try:
            async for message in socket:
                if message.type != WSMsgType.TEXT:
                    continue
                envelope = message.json()
                if not isinstance(envelope, list) or len(envelope) < 2:
                    continue
                kind, data = envelope[0], envelope[1]
                if kind == "stdin" and isinstance(data, str):
                    await service.send_bytes(data.encode("utf-8"))
                elif kind == "resize" and isinstance(data, dict):
                    await service.set_terminal_size(int(data["width"]), int(data["height"]))
                elif kind == "ping":
                    await socket.send_json(["pong", data])
                elif kind == "blur":
                    await service.blur()
                elif kind == "focus":
                    await service.focus()
        finally:
            await service.stop()
        return socket

    app = web.Application()
    aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(serve.templates_path))
    app.add_routes([
        web.get("/", index),
        web.get("/u/{user}", page),
        web.get("/ws/{user}", websocket),
        web.get("/download/{key}", serve.handle_download),
        web.static("/static", serve.statics_path),
    ])
    return app


def run(args: argparse.Namespace) -> int:
    from aiohttp import web

    from tutor.paths import data_root

    if not 0 < args.port < 65536:
        raise TutorError(T(f"--port {args.port}: give a port from 1 to 65535",
                           f"--port {args.port}：端口应在 1 到 65535 之间"))
    users_dir = (args.users_dir or data_root() / "users").resolve()
    try:
        users_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TutorError(T(f"{users_dir}: cannot be made ({exc.strerror})",
                           f"{users_dir}：无法创建（{exc.strerror}）")) from None
    app = build_app(args, users_dir)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"tutor: serving on http://{shown}:{args.port}/ (progress under {users_dir}); "
          "ctrl+c stops", flush=True)
    try:
        web.run_app(app, host=args.host, port=args.port, print=None)
    except OSError as exc:
        raise TutorError(T(f"cannot listen on {args.host}:{args.port} ({exc.strerror})",
                           f"无法监听 {args.host}:{args.port}（{exc.strerror}）"),
                         hint=T("choose another --port", "请换一个 --port")) from None
    return 0
