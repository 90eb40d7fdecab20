"""Re-run every corpus9 program and record (or check) what it really did.

    .venv/bin/python tests/diagnosis/corpus9/record.py --check   # compare with test.yaml
    .venv/bin/python tests/diagnosis/corpus9/record.py --write   # fill `observed` in test.yaml
    .venv/bin/python tests/diagnosis/corpus9/record.py --check --seed 1   # another seed

corpus9 has corpus3's format, so it is recorded by corpus3's recorder rather than a copy of
it: the `Item` and `Observed` models, the worker that runs each program in a child forked from
one interpreter that imported torch once (seeded, one intra-op thread, its own stdout), and the
comparison of a run with its record (numbers up to rounding) all live in ../corpus3/record.py.
This file only points them at corpus9's test.yaml. corpus3's `Item` asks a `family_note` of
every family corpus2 does not name, so corpus9 items whose family is new to corpus2 carry one,
including the families corpus3 and corpus4 introduced.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "test.yaml"


def _corpus3_record() -> ModuleType:
    name = "corpus3_record"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "corpus3" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


recorder = _corpus3_record()
Item = recorder.Item
Observed = recorder.Observed
run_programs = recorder.run_programs
differences = recorder.differences
same_text = recorder.same_text


def load_items(path: Path = CORPUS) -> list[Item]:
    """The items of corpus9 (or of another file in its format), validated."""
    items: list[Item] = recorder.load_items(path)
    return items


def main(argv: list[str] | None = None) -> int:
    """corpus3's command line, on corpus9's file unless --file names another."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--file" not in args:
        args += ["--file", str(CORPUS)]
    status: int = recorder.main(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
