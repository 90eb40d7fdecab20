"""Drive ``tutor serve`` in real headless Chromium, and read the terminal the page shows.

The page draws the app on a canvas (xterm.js), so its text is not in the DOM. An init script
keeps every byte the page's websocket receives and the size it asks for; a terminal emulator
(pyte) replays them into the screen the learner sees.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
REPO = Path(__file__).resolve().parents[2]

CAPTURE = """
(() => {
  const Native = window.WebSocket;
  window.__tutor = {bytes: [], size: null};
  class Recording extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      const u = new URL(url);
      if (u.searchParams.get('width')) {
        window.__tutor.size = [+u.searchParams.get('width'), +u.searchParams.get('height')];
      }
      this.addEventListener('message', (event) => {
        if (typeof event.data !== 'string') {
          window.__tutor.bytes.push(...new Uint8Array(event.data));
        }
      });
    }
    send(data) {
      try {
        const envelope = JSON.parse(data);
        if (envelope[0] === 'resize') {
          window.__tutor.size = [envelope[1].width, envelope[1].height];
        }
      } catch (e) {}
      return super.send(data);
    }
  }
  window.WebSocket = Recording;
})();
"""


def chromium_missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not CHROMIUM.exists():
        return "no Chromium at /usr/bin/chromium (Debian: apt-get install -y chromium)"
    try:
        import playwright  # noqa: F401
        import pyte  # noqa: F401
    except ImportError as error:
        return f"{error.name} is not installed (pip install -e '.[dev]')"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(users: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TUTOR_LANG="en")
    server = subprocess.Popen(
        [sys.executable, "-m", "tutor", "serve", "--port", str(port), "--users-dir", str(users),
         *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    assert "serving on" in line, line + (server.stdout.read() if server.poll() else "")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the banner is printed just before listening
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.1)
    raise AssertionError("tutor serve never listened")


def screen_text(page: object) -> str:
    """The terminal's screen as the page shows it: the bytes it received, replayed."""
    import pyte

    data = page.evaluate("() => window.__tutor")  # type: ignore[attr-defined]
    width, height = data["size"] or (80, 24)
    screen = pyte.Screen(width, height)
    pyte.ByteStream(screen).feed(bytes(data["bytes"]))
    return "\n".join(screen.display)


def wait_for_text(page: object, wanted: str, timeout_s: float = 60.0) -> str:
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = screen_text(page)
        if wanted in text:
            return text
        time.sleep(0.25)
    raise AssertionError(f"{wanted!r} never appeared; the screen:\n{text}")


def chromium_path() -> str:
    return str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
