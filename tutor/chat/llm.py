"""Optional LLM backend: any OpenAI-compatible ``/v1/chat/completions`` endpoint, standard
library only. Off unless configured by environment or config file.

Settings (pydantic-settings; the environment wins over the file, field by field):
``TUTOR_LLM_BASE_URL`` (e.g. ``http://127.0.0.1:8000/v1``), ``TUTOR_LLM_MODEL``,
``TUTOR_LLM_API_KEY`` (optional), ``TUTOR_LLM_TIMEOUT`` (seconds); or a YAML file with keys
``base_url``, ``model``, ``api_key``, ``timeout_s`` at ``TUTOR_LLM_CONFIG`` or
``<user config dir>/autograd-tutor/llm.yaml``.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from tutor.chat.llm_location import config_path, llm_configured
from tutor.chat.models import Passage
from tutor.errors import TutorError
from tutor.i18n import Lang, T
from tutor.yaml_read import YamlProblem, load

if TYPE_CHECKING:
    from tutor.chat.context import ChatContext

Message = dict[str, str]


class LLMError(Exception):
    """The endpoint failed (connection, HTTP status, timeout, malformed reply)."""


class LLMConfigError(TutorError):
    """The LLM settings (environment or config file) are set but not valid."""


class _YamlFile(PydanticBaseSettingsSource):
    """The settings in the YAML config file, read with the app's own YAML reader."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path):
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ gives the whole file at once

    def __call__(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        try:
            data = load(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise LLMConfigError(T(f"{self.path}: cannot read the LLM config: {exc}",
                                   f"{self.path}：无法读取语言模型配置：{exc}")) from exc
        except YamlProblem as exc:
            raise LLMConfigError(
                T(f"{self.path}:{exc.line}:{exc.col}: invalid LLM config: {exc.text.en}",
                  f"{self.path}:{exc.line}:{exc.col}：语言模型配置无效：{exc.text.zh}"),
                hint=_HINT,
            ) from exc
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise LLMConfigError(T(f"{self.path}: invalid LLM config: not a mapping of keys",
                                   f"{self.path}：语言模型配置无效：不是键值映射"), hint=_HINT)
        return data


_HINT = T(
    "expected keys base_url, model, optional api_key and timeout_s; delete the file to stay "
    "offline",
    "应有 base_url、model 两个键，api_key 和 timeout_s 可选；删除该文件即保持离线",
)


class LLMConfig(BaseSettings):
    """Where the LLM is. From the environment (``TUTOR_LLM_*``), then the YAML file."""

    model_config = SettingsConfigDict(
        env_prefix="TUTOR_LLM_", extra="forbid", frozen=True, populate_by_name=True
    )

    base_url: str = Field(description="e.g. http://127.0.0.1:8000/v1")
    model: str
    api_key: str | None = None
    timeout_s: float = Field(
        default=20.0,
        gt=0,
        validation_alias=AliasChoices("TUTOR_LLM_TIMEOUT", "TUTOR_LLM_TIMEOUT_S"),
    )
    stream: bool = True

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # given values (tests, callers) first, then the environment, then the file
        return init_settings, env_settings, _YamlFile(settings_cls, config_path())

    @property
    def endpoint(self) -> str:
        url = self.base_url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"


def load_llm_config() -> LLMConfig | None:
    """The configured endpoint, or None when none is configured (the default: offline)."""
    if not llm_configured():
        return None
    try:
        return LLMConfig()  # the fields come from the sources
    except ValidationError as exc:
        where = f"{config_path()} / TUTOR_LLM_*"
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}"
            for error in exc.errors()
        )
        raise LLMConfigError(
            T(f"invalid LLM settings ({where}): {problems}",
              f"语言模型设置无效（{where}）：{problems}"),
            hint=_HINT,
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
