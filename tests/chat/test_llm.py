"""The optional LLM backend against a real HTTP server on loopback: plain and streamed
replies, a timeout, a 500, and replies that leak the solution (caught before shown)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tutor.chat import ChatContext, LLMConfig, LLMConfigError, OpenAICompatibleBackend, Tutor
from tutor.chat.llm import load_llm_config
from tutor.course.models import Course

LEAK = "Here you go:\n\n```python\ncube = (w ** 3).sum()\ncube.backward()\n```\n\nDone."
VALUE = "Nearly there.\n\nWith that change `w.grad[0]` is 1., as it should be."
GOOD = "Autograd records operations.\n\nCall `backward()` on a scalar.\n\nRead backward/intro."


class _Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        # the client may give up (the timeout test): then there is nothing to answer
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._reply()

    def _reply(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        mode = self.path.split("/")[1]
        if mode == "fail":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"boom")
            return
        if mode == "slow":
            time.sleep(1.5)
        if mode in _BROKEN:
            self._broken(mode, stream=bool(body.get("stream")))
            return
        text = {"leak": LEAK, "value": VALUE}.get(mode, GOOD)
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for i in range(0, len(text), 7):
                chunk = {"choices": [{"delta": {"content": text[i : i + 7]}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            return
        reply = {"choices": [{"message": {"role": "assistant", "content": text}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


    def _broken(self, mode: str, *, stream: bool) -> None:
        """Replies a real endpoint can give when something is wrong on its side."""
        payload = _BROKEN[mode]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        # "cut" promises more bytes than it sends, then hangs up: the read breaks off
        length = len(payload) + (500 if mode == "cut" else 0)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        if mode == "cut":
            self.connection.shutdown(2)


_BROKEN: dict[str, bytes] = {
    "garbage": b"<html>502 Bad Gateway</html>",
    "nochoices": b'{"object": "error", "message": "model not found"}',
    "nullcontent": b'{"choices": [{"message": {"role": "assistant", "content": null}}]}',
    "badstream": b'data: {"choices": [{"delta": "oops"}]}\n\ndata: {not json\n\n',
    "cut": b'{"choices": [{"message": {"content": "Autograd rec',
}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _tutor(course: Course, url: str, mode: str, timeout: float = 5.0) -> Tutor:
    config = LLMConfig(base_url=f"{url}/{mode}/v1", model="tiny", api_key="k-1", timeout_s=timeout)
    return Tutor(course, backend=OpenAICompatibleBackend(config), catalog_entries=[])


CTX = ChatContext(
    lesson_id="backward", step_id="cube", code="w = torch.tensor([2., 5.])", attempts=1
)


def test_plain_reply_is_used_and_the_prompt_carries_passages_and_context(
    course: Course, server: str
) -> None:
    _Handler.requests.clear()
    answer = _tutor(course, server, "ok").ask("what does backward do?", context=CTX)
    assert answer.text == GOOD.strip() and answer.fallback_notice is None
    request = _Handler.requests[-1]
    assert request["path"] == "/ok/v1/chat/completions" and request["auth"] == "Bearer k-1"
    prompt = json.dumps(request["body"]["messages"], ensure_ascii=False)
    assert "Never write the solution" in prompt and "English" in prompt
    assert "w = torch.tensor([2., 5.])" in prompt  # the learner's code
    assert "backward/intro" in prompt  # a retrieved passage
    assert "(w ** 3).sum()" not in prompt  # the reference solution is never sent


def test_streamed_reply_arrives_in_pieces(course: Course, server: str) -> None:
    tutor = _tutor(course, server, "ok")
    chunks = list(tutor.stream("backward 做什么？", context=CTX))
    assert len(chunks) > 1 and "".join(chunks).strip() == GOOD.strip()
    assert tutor.last_answer is not None and tutor.last_answer.text == GOOD.strip()
    prompt = _Handler.requests[-1]["body"]
    assert prompt["stream"] is True and "Simplified Chinese" in prompt["messages"][0]["content"]


def test_server_error_falls_back_to_the_offline_answer(course: Course, server: str) -> None:
    answer = _tutor(course, server, "fail").ask("what does backward do?")
    assert answer.fallback_notice and "HTTP 500" in answer.fallback_notice
    assert "backward/intro" in answer.text  # the offline answer follows the notice
    chunks = "".join(_tutor(course, server, "fail").stream("what does backward do?"))
    assert "HTTP 500" in chunks and "backward/intro" in chunks


def test_timeout_falls_back_with_a_notice(course: Course, server: str) -> None:
    answer = _tutor(course, server, "slow", timeout=0.3).ask("what does backward do?")
    assert answer.fallback_notice is not None and "backward/intro" in answer.text


def test_unreachable_endpoint_falls_back(course: Course) -> None:
    answer = _tutor(course, "http://127.0.0.1:9", "ok", timeout=0.5).ask("what is detach?")
    assert answer.fallback_notice and "cannot reach" in answer.fallback_notice


def test_a_reply_that_leaks_the_solution_is_withheld(course: Course, server: str) -> None:
    answer = _tutor(course, server, "leak").ask("how do I do this step?", context=CTX)
    assert "(w ** 3)" not in answer.text and answer.fallback_notice
    assert "withheld" in answer.fallback_notice
    streamed = "".join(
        _tutor(course, server, "leak").stream("how do I call backward here?", context=CTX)
    )
    assert "(w ** 3)" not in streamed and "withheld" in streamed
    assert streamed.startswith("Here you go:")  # the clean first paragraph was shown


def test_a_reply_stating_a_small_expected_value_is_withheld(course: Course, server: str) -> None:
    # 1. is a "trivial" number, but stated as the value of the checked expression it is the answer
    ctx = CTX.model_copy(update={"expected_by_expr": {"w.grad[0]": 1.0}})
    answer = _tutor(course, server, "value").ask("is my gradient right now?", context=ctx)
    assert answer.fallback_notice and "is 1." not in answer.text
    plain = _tutor(course, server, "good").ask("is my gradient right now?", context=ctx)
    assert plain.fallback_notice is None and plain.text.startswith("Autograd records")


def test_solution_requests_and_off_topic_never_reach_the_llm(course: Course, server: str) -> None:
    _Handler.requests.clear()
    tutor = _tutor(course, server, "leak")
    assert tutor.ask("just give me the code", context=CTX).hint_level == 1
    assert tutor.ask("what's the weather in Rome").kind == "off_topic"
    assert _Handler.requests == []


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """An environment with no LLM settings of the machine's own, and no config file."""
    for name in ("BASE_URL", "MODEL", "API_KEY", "TIMEOUT", "TIMEOUT_S", "CONFIG"):
        monkeypatch.delenv(f"TUTOR_LLM_{name}", raising=False)
    monkeypatch.setenv("TUTOR_LLM_CONFIG", str(tmp_path / "none.yaml"))
    return monkeypatch


def test_config_comes_from_environment_or_file(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert load_llm_config() is None
    env.setenv("TUTOR_LLM_BASE_URL", "http://h/v1")
    env.setenv("TUTOR_LLM_MODEL", "m")
    env.setenv("TUTOR_LLM_TIMEOUT", "7.5")
    config = load_llm_config()
    assert config is not None and config.endpoint == "http://h/v1/chat/completions"
    assert config.timeout_s == 7.5 and config.api_key is None
    for name in ("BASE_URL", "MODEL", "TIMEOUT"):
        env.delenv(f"TUTOR_LLM_{name}")
    path = tmp_path / "llm.yaml"
    path.write_text("base_url: http://x/v1\nmodel: small\ntimeout_s: 3\n", encoding="utf-8")
    env.setenv("TUTOR_LLM_CONFIG", str(path))
    config = load_llm_config()
    assert config is not None and config.model == "small" and config.timeout_s == 3
    # the environment wins over the file, field by field
    env.setenv("TUTOR_LLM_MODEL", "large")
    config = load_llm_config()
    assert config is not None and config.model == "large" and config.base_url == "http://x/v1"
    env.delenv("TUTOR_LLM_MODEL")
    path.write_text("base_url: http://x/v1\nmodle: typo\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match=r"llm\.yaml.*modle"):
        load_llm_config()
    path.write_text("- base_url\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match="not a mapping"):
        load_llm_config()


def test_half_a_configuration_is_an_error_not_silence(env: pytest.MonkeyPatch) -> None:
    env.setenv("TUTOR_LLM_BASE_URL", "http://h/v1")
    with pytest.raises(LLMConfigError, match="model"):
        load_llm_config()


def test_tutor_from_environment_is_offline_unless_configured(
    course: Course, env: pytest.MonkeyPatch
) -> None:
    assert Tutor.from_environment(course, catalog_entries=[]).backend is None
    env.setenv("TUTOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("TUTOR_LLM_MODEL", "m")
    tutor = Tutor.from_environment(course, catalog_entries=[])
    assert isinstance(tutor.backend, OpenAICompatibleBackend)
    assert tutor.backend.config.model == "m"


@pytest.mark.parametrize("mode", sorted(_BROKEN))
def test_a_malformed_or_broken_reply_falls_back_plain_and_streamed(
    course: Course, server: str, mode: str
) -> None:
    answer = _tutor(course, server, mode).ask("what does backward do?")
    assert answer.fallback_notice and "\n" not in answer.fallback_notice
    assert answer.text.startswith(answer.fallback_notice) and "backward/intro" in answer.text
    tutor = _tutor(course, server, mode)
    streamed = "".join(tutor.stream("what does backward do?"))
    assert tutor.last_answer is not None and tutor.last_answer.fallback_notice
    assert "backward/intro" in streamed


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/v1", "http://127.0.0.1:notaport/v1"])
def test_a_bad_endpoint_url_falls_back_with_a_notice(course: Course, url: str) -> None:
    config = LLMConfig(base_url=url, model="x", timeout_s=1)
    tutor = Tutor(course, backend=OpenAICompatibleBackend(config), catalog_entries=[])
    answer = tutor.ask("why is x.grad None")
    assert answer.fallback_notice and ".grad" in answer.text
    assert "".join(tutor.stream("why is x.grad None")).startswith(answer.fallback_notice)


def test_a_broken_configuration_leaves_the_tutor_offline_with_a_notice(
    course: Course, env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env.setenv("TUTOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("TUTOR_LLM_MODEL", "m")
    env.setenv("TUTOR_LLM_TIMEOUT", "soon")
    tutor = Tutor.from_environment(course, catalog_entries=[])  # the TUI's way in
    assert tutor.backend is None
    answer = tutor.ask("why is x.grad None")
    assert answer.fallback_notice and "TUTOR_LLM_TIMEOUT" in answer.fallback_notice
    assert "\n" not in answer.fallback_notice
    for name in ("BASE_URL", "MODEL", "TIMEOUT"):
        env.delenv(f"TUTOR_LLM_{name}")
    bad = tmp_path / "llm.yaml"
    bad.write_text("base_url: [unclosed\n", encoding="utf-8")
    env.setenv("TUTOR_LLM_CONFIG", str(bad))
    tutor = Tutor.from_environment(course, catalog_entries=[])
    zh = tutor.ask("为什么 x.grad 是 None")
    assert zh.fallback_notice and zh.fallback_notice.startswith("语言模型没有回答")
    assert "llm.yaml:" in zh.fallback_notice


def test_tutor_ask_with_a_url_that_is_not_one_answers_offline(tmp_path: Path) -> None:
    """Issue 22 item 1: this printed `ValueError: unknown url type` with a traceback."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TUTOR_LLM_BASE_URL": "notaurl", "TUTOR_LLM_MODEL": "x",
           "TUTOR_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "ask", "why is x.grad None"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    first, _, rest = done.stdout.partition("\n")
    assert "notaurl" in first and "offline" in first and ".grad" in rest
