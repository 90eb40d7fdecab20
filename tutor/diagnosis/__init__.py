"""Explains autograd errors, warnings and silent pitfalls in plain language.

CONTRACT (public API, implemented by the diagnosis work)::

    explain(result: RunResult, code: str) -> list[Diagnosis]
        # first the diagnosis of the error (specific or generic), then of warnings,
        # then static pitfalls; empty when the run was clean and no pitfall was found
    diagnose_error(result: RunResult, code: str) -> Diagnosis | None
    find_pitfalls(code: str) -> list[Diagnosis]
    load_catalog() -> Catalog                      # tutor/diagnosis/catalog.yaml
    for_learner(message: str) -> str              # torch's text minus its build notes, for
                                                   # every place that shows warnings/errors

The catalog (``catalog.yaml``) is data; ``engine`` matches errors and warnings against it,
``pitfalls`` holds the static rules, ``source`` reads the learner's code.
"""

from __future__ import annotations

from tutor.diagnosis.catalog import Catalog, CatalogError, Entry, load_catalog
from tutor.diagnosis.messages import for_learner
from tutor.diagnosis.models import Diagnosis, Severity
from tutor.sandbox.models import RunResult

__all__ = [
    "Catalog",
    "CatalogError",
    "Diagnosis",
    "Entry",
    "Severity",
    "diagnose_error",
    "explain",
    "find_pitfalls",
    "for_learner",
    "load_catalog",
]


def diagnose_error(result: RunResult, code: str) -> Diagnosis | None:
    """The diagnosis of the run's error (specific, or generic when no entry fits); None for
    a run that ended normally."""
    from tutor.diagnosis import engine

    if result.error is not None and result.error.type != "Cancelled":
        found = engine.match_error(result.error, code)
        # the sandbox describes a stopped run as an error too (type "Timeout", ...): unless
        # the catalog knows it, say what the limit means rather than a generic error
        stopped = engine.generic_outcome(result) if found.generic else None
        if stopped is not None:
            return stopped.model_copy(update={"line": result.error.line})
        return found
    if result.outcome in ("ok", "exited") or result.error is not None:
        return None
    return engine.generic_outcome(result)


def find_pitfalls(code: str) -> list[Diagnosis]:
    """Silent mistakes found on the syntax tree, in line order. Empty for unparsable code."""
    from tutor.diagnosis import engine
    from tutor.diagnosis.pitfalls import RULES
    from tutor.diagnosis.source import Source

    source = Source.of(code)
    if source is None:
        return []
    found: list[Diagnosis] = []
    for entry in load_catalog().pitfalls:
        assert entry.pitfall is not None
        for hit in RULES[entry.pitfall](source):
            built = engine.build_pitfall(entry, hit.line, hit.variable)
            if built is not None:
                found.append(built)
    return sorted(found, key=lambda d: (d.line or 0, d.id))


def explain(result: RunResult, code: str) -> list[Diagnosis]:
    """Error first, then warnings, then pitfalls not already explained by one of those."""
    from tutor.diagnosis import engine
    from tutor.diagnosis.filling import tidied
    from tutor.diagnosis.source import Source

    source = Source.of(code)
    out: list[Diagnosis] = []
    error = diagnose_error(result, code)
    if error is not None:
        out.append(error)
    catalog = load_catalog()

    def covered(diagnosis: Diagnosis) -> bool:
        fired = {d.id for d in out}
        return bool(fired & set(catalog.get(diagnosis.id).covered_by)) or any(
            (d.id, d.line) == (diagnosis.id, diagnosis.line) for d in out
        )

    for warning in result.warnings:
        diagnosis = engine.match_warning(warning, source)
        if diagnosis is not None and not covered(diagnosis):
            out.append(diagnosis)
    for pitfall in find_pitfalls(code):
        if not covered(pitfall):
            out.append(pitfall)
    return [tidied(d) for d in out]
