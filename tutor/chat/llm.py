"""Optional LLM backend: any OpenAI-compatible ``/v1/chat/completions`` endpoint, standard
library only. Off unless configured by environment or config file.

Environment: ``TUTOR_LLM_BASE_URL`` (e.g. ``http://127.0.0.1:8000/v1``), ``TUTOR_LLM_MODEL``,
``TUTOR_LLM_API_KEY`` (optional), ``TUTOR_LLM_TIMEOUT`` (seconds). Or a YAML file with keys
``base_url``, ``model``, ``api_key``, ``timeout_s`` at ``TUTOR_LLM_CONFIG`` or
``<user config dir>/autograd-tutor/llm.yaml``.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from tutor.chat.llm_location import config_path
from tutor.chat.models import ChatContext, Passage
from tutor.errors import TutorError
from tutor.i18n import Lang

Message = dict[str, str]


class LLMError(Exception):
    """The endpoint failed (connection, HTTP status, timeout, malformed reply)."""


class LLMConfigError(TutorError):
    """The LLM config file exists but is not valid."""


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(description="e.g. http://127.0.0.1:8000/v1")
    model: str
    api_key: str | None = None
    timeout_s: float = Field(20.0, gt=0)
    stream: bool = True

    @property
    def endpoint(self) -> str:
        url = self.base_url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"


def load_llm_config(env: Mapping[str, str] = os.environ) -> LLMConfig | None:
    """The configured endpoint, or None when none is configured (the default: offline)."""
    if env.get("TUTOR_LLM_BASE_URL") and env.get("TUTOR_LLM_MODEL"):
        try:
            timeout = float(env.get("TUTOR_LLM_TIMEOUT", "20"))
        except ValueError as exc:
            raise LLMConfigError(
                f"TUTOR_LLM_TIMEOUT={env['TUTOR_LLM_TIMEOUT']!r} is not a number of seconds"
            ) from exc
        return LLMConfig(
            base_url=env["TUTOR_LLM_BASE_URL"],
            model=env["TUTOR_LLM_MODEL"],
            api_key=env.get("TUTOR_LLM_API_KEY") or None,
            timeout_s=timeout,
        )
    path = config_path(env)
    if not path.is_file():
        return None
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        return LLMConfig.model_validate(data)
    except (OSError, YAMLError, ValidationError) as exc:
        raise LLMConfigError(
            f"{path}: invalid LLM config: {exc}",
            hint="expected keys base_url, model, optional api_key and timeout_s; "
            "delete the file to stay offline",
        ) from exc


class ChatBackend(Protocol):
    def complete(self, messages: Sequence[Message]) -> str: ...

    def stream(self, messages: Sequence[Message]) -> Iterator[str]: ...


class OpenAICompatibleBackend:
    """Talks to ``POST {base_url}/chat/completions`` with ``http``/``urllib`` only."""

    def __init__(self, config: LLMConfig):
        self.config = config

    def _request(self, messages: Sequence[Message], *, stream: bool) -> urllib.request.Request:
        body = {"model": self.config.model, "messages": list(messages), "stream": stream}
        headers = {"Content-Type": "application/json"}
        if stream:
            headers["Accept"] = "text/event-stream"
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        # urllib checks the URL only here, with a ValueError ('notaurl': unknown url type)
        if urllib.parse.urlsplit(self.config.endpoint).scheme not in ("http", "https"):
            raise LLMError(f"{self.config.base_url!r} is not an http(s) URL")
        try:
            return urllib.request.Request(
                self.config.endpoint, data=json.dumps(body).encode(), headers=headers, method="POST"
            )
        except ValueError as exc:
            raise LLMError(f"{self.config.base_url!r} is not a usable URL: {exc}") from exc

    def _open(self, request: urllib.request.Request):  # type: ignore[no-untyped-def]
        try:
            return urllib.request.urlopen(request, timeout=self.config.timeout_s)
        except urllib.error.HTTPError as exc:
            raise LLMError(f"HTTP {exc.code} from {self.config.endpoint}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise LLMError(f"cannot reach {self.config.endpoint}: {reason}") from exc
        except (http.client.HTTPException, ValueError) as exc:  # bad port, garbled status line
            raise LLMError(f"cannot talk to {self.config.endpoint}: {exc}") from exc

    def complete(self, messages: Sequence[Message]) -> str:
        with self._open(self._request(messages, stream=False)) as response:
            try:
                data = json.loads(response.read().decode("utf-8"))
                content = data["choices"][0]["message"]["content"]
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise LLMError(f"the reply broke off: {exc}") from exc
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise LLMError(f"malformed reply: {exc!r}") from exc
        if not isinstance(content, str):
            raise LLMError("malformed reply: no text in choices[0].message.content")
        return content

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """Yields content deltas of a server-sent-events reply."""
        deadline = time.monotonic() + self.config.timeout_s * 3
        with self._open(self._request(messages, stream=True)) as response:
            try:
                for raw in response:
                    if time.monotonic() > deadline:
                        raise LLMError("the streamed reply took too long")
                    line = raw.decode("utf-8").strip()
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        return
                    delta = json.loads(payload)["choices"][0].get("delta", {})
                    if isinstance(delta.get("content"), str) and delta["content"]:
                        yield delta["content"]
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise LLMError(f"the stream broke off: {exc}") from exc
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                raise LLMError(f"malformed stream: {exc!r}") from exc


SYSTEM_PROMPT = """You are a patient tutor for PyTorch autograd inside a course.
Rules you must follow:
- Answer in {language}. Be short: at most about 150 words and one short code example.
- Base the answer on the passages given; name the lesson and step to read.
- Never write the solution of the learner's current exercise, never give its expected values,
  and never complete their code for them. If they ask for the answer, give a hint and a
  guiding question instead.
- If the question is not about PyTorch/autograd, say you can't help with that here.
"""


def build_messages(
    question: str,
    *,
    lang: Lang,
    passages: Sequence[Passage],
    context: ChatContext | None,
    card: str | None = None,
) -> list[Message]:
    """The prompt: rules, the answer card that answers the question (if one does), retrieved
    passages and the learner's context (never the solution)."""
    language = "Simplified Chinese" if lang == "zh" else "English"
    parts = []
    if card:
        parts.append(f"The course's answer card for this question (correct; build on it):\n{card}")
    parts.append("Passages from the course:")
    for p in passages:
        where = f"{p.lesson_id}/{p.step_id}" if p.step_id else (p.lesson_id or p.id)
        parts.append(f"[{where}] {p.title.get(lang)}\n{p.text.get(lang)}")
        if p.code:
            parts.append(f"```python\n{p.code_for(lang)}\n```")
    if context is not None:
        parts.append(
            f"Learner context: lesson {context.lesson_id}, step {context.step_id}, "
            f"attempts {context.attempts}, hints seen {context.hints_unlocked}."
        )
        if context.code.strip():
            parts.append(f"Learner's code:\n```python\n{context.code[:4000]}\n```")
        run = context.last_run
        if run is not None and run.error is not None:
            parts.append(
                f"Last run: {run.error.type} at line {run.error.line}: {run.error.message[:500]}"
            )
        for d in context.diagnoses[:3]:
            parts.append(f"Diagnosis: {d.title.get(lang)} — {d.explanation.get(lang)}")
    parts.append(f"Question: {question}")
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(language=language)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
