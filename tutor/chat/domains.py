"""Other domains (``domains.yaml``): the vocabulary of things learners ask about that are not
this course, and requests to produce another domain's work (a poem, another subject's
homework). Plain regular expressions, no models: ``tutor ask`` checks a question against them
before it answers from an answer card, without loading the retrieval's on-topic judgement
(``topicality.py``, which weighs these words against the course's)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tutor.data_cache import read_data
from tutor.errors import TutorError

DOMAINS_PATH = Path(__file__).with_name("domains.yaml")
_NEVER = r"(?!x)x"
ERROR_LINE_RE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Warning)\b:[^\n]*?(?=\s{2,}|\s*$)", re.MULTILINE
)
"""A quoted Python error ("TypeError: list indices must be integers"): its message, up to the
end of the line or a wide gap (what the learner adds after it is their own words)."""


@dataclass(frozen=True)
class Domains:
    """The file's shape (the tests validate the file against it with pydantic)."""

    domains: dict[str, list[str]]
    task_domains: list[str] = field(default_factory=list)
    """Domains whose words name a thing to produce (a poem, homework): a request for one is
    another job, whatever its subject, unless the question also asks to understand."""
    produce: list[str] = field(default_factory=list)
    """A request to produce or do something (write, compose, solve, show the working)."""
    understand: list[str] = field(default_factory=list)
    """Asking to understand something (why, what is, I don't get): a question, not a task."""
    setup_domains: list[str] = field(default_factory=list)
    """Domains of the learner's setup (installing, versions, git, other frameworks): named
    with no word of autograd proper, the question is about the setup."""
    explained_domains: list[str] = field(default_factory=list)
    """Domains whose declined questions are told why (their own OFF_TOPIC_<DOMAIN> words)."""


def _either(patterns: list[str]) -> re.Pattern[str]:
    # ASCII word boundaries: an English name next to Chinese text ("是因为paddle暂不支持")
    # is a word of its own (with Unicode \b, Chinese characters would be its letters)
    return re.compile("|".join(f"(?:{p})" for p in patterns) or _NEVER,
                      re.IGNORECASE | re.ASCII)


@lru_cache(maxsize=4)
def load_domains(path: Path = DOMAINS_PATH) -> Domains:
    try:
        raw = read_data(path)
        data = Domains(**raw)
        for patterns in data.domains.values():
            _either(patterns)  # a bad pattern is the file's error
    except (OSError, ValueError, TypeError, re.error) as exc:
        raise TutorError(f"{path}: cannot load the tutor's other domains: {exc}") from exc
    return data


@lru_cache(maxsize=4)
def _domain_patterns(path: Path = DOMAINS_PATH) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, _either(p)) for name, p in load_domains(path).domains.items())


@lru_cache(maxsize=4)
def _task_patterns(
    path: Path = DOMAINS_PATH,
) -> tuple[frozenset[str], re.Pattern[str], re.Pattern[str]]:
    data = load_domains(path)
    return frozenset(data.task_domains), _either(data.produce), _either(data.understand)


def task_domain_names(path: Path = DOMAINS_PATH) -> frozenset[str]:
    """The domains whose words name a thing to produce (homework, a poem)."""
    return _task_patterns(path)[0]


def foreign_words(question: str, path: Path = DOMAINS_PATH) -> dict[str, str]:
    """Distinct other-domain words in ``question`` (lowercased) -> their domain."""
    out: dict[str, str] = {}
    for name, pattern in _domain_patterns(path):
        for match in pattern.finditer(question):
            out.setdefault(re.sub(r"\s+", " ", match.group(0).lower().strip()), name)
    return out


def task_request(question: str, foreign: dict[str, str], path: Path = DOMAINS_PATH) -> bool:
    """Whether ``question`` asks to produce a piece of writing or another subject's homework
    (by the words of a task domain and a request to produce), and not to understand anything:
    "write a poem about gradient descent" is a writing job even though it names autograd."""
    domains, produce, understand = _task_patterns(path)
    return (
        any(domain in domains for domain in foreign.values())
        and produce.search(question) is not None
        and understand.search(question) is None
    )


def setup_domain(foreign: dict[str, str], path: Path = DOMAINS_PATH) -> str | None:
    """The first of ``foreign``'s domains (see :func:`foreign_words`) that is one of the
    learner's setup (``setup_domains``), or None."""
    setup = load_domains(path).setup_domains
    return next((domain for domain in foreign.values() if domain in setup), None)


def explained_domain(question: str, path: Path = DOMAINS_PATH) -> str | None:
    """The first domain named in ``question`` whose decline says why
    (``explained_domains``), or None."""
    explained = load_domains(path).explained_domains
    return next((d for d in foreign_words(question, path).values() if d in explained), None)


def may_be_elsewhere(question: str) -> bool:
    """Whether the on-topic judgement could decline ``question`` before anything else is
    tried: it names another domain's thing or quotes a Python error (which may be a plain
    one of a scraper's). Without either, nothing needs judging up front."""
    return bool(foreign_words(question)) or ERROR_LINE_RE.search(question) is not None
