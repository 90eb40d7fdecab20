"""Re-run every silent_dev program and record (or check) what it really did.

    .venv/bin/python tests/diagnosis/silent_dev/record.py --check   # compare with dev.yaml
    .venv/bin/python tests/diagnosis/silent_dev/record.py --write   # fill `observed`

silent_dev has corpus3's format and is recorded by corpus3's recorder (the same way corpus5's
record.py does it), pointed at this folder's dev.yaml.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "dev.yaml"


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


def main(argv: list[str] | None = None) -> int:
    """corpus3's command line, on this folder's dev.yaml unless --file names another."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--file" not in args:
        args += ["--file", str(CORPUS)]
    status: int = recorder.main(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
