"""Re-run every corpus14 program and record (or check) what it really did.

    .venv/bin/python tests/diagnosis/corpus14/record.py --check   # compare with test.yaml
    .venv/bin/python tests/diagnosis/corpus14/record.py --write   # fill `observed` in test.yaml
    .venv/bin/python tests/diagnosis/corpus14/record.py --check --seed 1   # another seed

corpus14 has corpus3's format and is recorded by corpus3's recorder (../corpus3/record.py),
pointed at this folder's test.yaml by ../frozen_corpus.py's recorder_for; nothing is copied.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("frozen_corpus", HERE.parent / "frozen_corpus.py")
assert _spec is not None and _spec.loader is not None
_frozen_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_frozen_corpus)
recorder = _frozen_corpus.recorder_for(HERE / "test.yaml")
load_items = recorder.load_items
main = recorder.main

if __name__ == "__main__":
    sys.exit(main())
