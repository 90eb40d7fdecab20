"""Explains autograd errors, warnings and silent pitfalls in plain language.

CONTRACT (public API, implemented by the diagnosis work)::

    explain(result: RunResult, code: str) -> list[Diagnosis]
        # first the diagnosis of the error (specific or generic), then of warnings,
        # then static pitfalls; empty when the run was clean and no pitfall was found
    diagnose_error(result: RunResult, code: str) -> Diagnosis | None
    find_pitfalls(code: str) -> list[Diagnosis]
    load_catalog() -> Catalog                      # tutor/diagnosis/catalog.yaml
"""
