"""The zip a teacher uploads: Gradescope's autograder, or PrairieLearn's external grader.

Both carry the tutor's own source (installed offline from the bundle, next to torch's CPU
build), the lessons when they are not the bundled course, and ``tutor-autograder.json``.

Gradescope (``setup.sh`` and ``run_autograder`` at the zip's root, as its specs require)::

    setup.sh  run_autograder  tutor-autograder.json  autograd-tutor/  [lessons/]

PrairieLearn (no set-up phase: the grader is an image the course builds once)::

    Dockerfile  README.md  autograd-tutor/
    serverFilesCourse/autograd_tutor/{run.sh, tutor-autograder.json, [lessons/]}
    questions/<lesson>-<step>/info.json      # externalGradingOptions for each exercise
"""

from __future__ import annotations

import html
import io
import json
import os
import shutil
import stat
import zipfile
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path

from tutor.export.autograder import CONFIG_NAME, AutograderConfig

DIST_NAME = "autograd-tutor"
SOURCE_DIR = "autograd-tutor"
VENV = "/opt/autograd-tutor"
"""Where setup.sh (or the Dockerfile) installs the tutor and torch: a venv, because recent
Ubuntu images refuse ``pip install`` into the system Python."""
PACKAGE_DATA = ["py.typed", "**/*.tcss", "**/*.yaml", "**/*.json", "**/*.po", "**/*.mo",
                "bundled_lessons/*.yaml", "bundled_lessons/*.md"]
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

GRADESCOPE_SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y python3 python3-venv python3-pip
python3 -m venv {venv}
{venv}/bin/pip install --upgrade pip
{venv}/bin/pip install "torch=={torch}" --index-url {index}
{venv}/bin/pip install ./{source}
# the exercises' truth, computed once here instead of at every submission
{venv}/bin/python -m tutor.export.autograder gradescope --warm --config "$PWD/{config}"
"""

GRADESCOPE_RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: it grades ROOT/submission and writes
# ROOT/results/results.json. ROOT is /autograder unless AUTOGRADER_ROOT says otherwise.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PY="${{TUTOR_PYTHON:-{venv}/bin/python}}"
exec "$PY" -m tutor.export.autograder gradescope --root "$ROOT" \\
    --config "${{AUTOGRADER_CONFIG:-$ROOT/source/{config}}}"
"""

PRAIRIELEARN_RUN = """\
#!/usr/bin/env bash
# PrairieLearn's entrypoint: grades ROOT/student, writes ROOT/results/results.json.
ROOT="${{GRADE_ROOT:-/grade}}"
PY="${{TUTOR_PYTHON:-{venv}/bin/python}}"
exec "$PY" -m tutor.export.autograder prairielearn --root "$ROOT" \\
    --config "${{AUTOGRADER_CONFIG:-$ROOT/serverFilesCourse/autograd_tutor/{config}}}"
"""

PRAIRIELEARN_DOCKERFILE = """\
# The external-grading image: build it, push it to Docker Hub, and name it in each
# question's info.json (externalGradingOptions.image).
FROM python:3.12-slim
RUN python -m venv {venv} && {venv}/bin/pip install --upgrade pip \\
    && {venv}/bin/pip install "torch=={torch}" --index-url {index}
COPY {source} /tmp/{source}
RUN {venv}/bin/pip install /tmp/{source} && rm -rf /tmp/{source}
"""

PRAIRIELEARN_README = """\
# autograd-tutor external grader for PrairieLearn

1. `docker build -t YOU/autograd-tutor-grader . && docker push YOU/autograd-tutor-grader`
2. Copy `serverFilesCourse/autograd_tutor/` into your course's `serverFilesCourse/`, and each
   folder of `questions/` into your course's `questions/` (then set `image` in its info.json).
3. Students submit `{files}` (a file editor or upload element).

The grader writes `/grade/results/results.json`: `score` in [0, 1], a test per check, and
`gradable: false` (no attempt lost) for code that is not valid Python.
"""

QUESTION_HTML = """\
<pl-question-panel>
  <p>{prompt}</p>
</pl-question-panel>
<pl-file-editor file-name="{file}" ace-mode="ace/mode/python"></pl-file-editor>
<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def _pyproject() -> str:
    """The tutor's own pyproject for an offline ``pip install``, from its installed metadata."""
    try:
        deps = [d for d in (requires(DIST_NAME) or []) if "extra ==" not in d]
        tool_version = version(DIST_NAME)
    except PackageNotFoundError:  # running from a tree that was never installed
        from tutor import __version__

        deps, tool_version = [], __version__
    return "\n".join([
        "[build-system]",
        'requires = ["setuptools>=77", "wheel"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f'name = "{DIST_NAME}"',
        f'version = "{tool_version}"',
        'requires-python = ">=3.10"',
        f"dependencies = {json.dumps(deps)}",
        "",
        "[tool.setuptools.packages.find]",
        'include = ["tutor*"]',
        "",
        "[tool.setuptools.package-data]",
        f"tutor = {json.dumps(PACKAGE_DATA)}",
        "",
    ])


def _torch_pin() -> str:
    from tutor.grading.expected import torch_version

    found = torch_version().split("+")[0]
    return found if found != "unknown" else "2.13.0"


class Bundle:
    """A zip under construction; scripts are stored executable."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.zip = zipfile.ZipFile(self.buffer, "w", zipfile.ZIP_DEFLATED)

    def text(self, name: str, content: str, *, executable: bool = False) -> None:
        self.data(name, content.encode("utf-8"), executable=executable)

    def data(self, name: str, content: bytes, *, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        mode = 0o755 if executable else 0o644
        info.external_attr = (stat.S_IFREG | mode) << 16
        self.zip.writestr(info, content)

    def tree(self, source: Path, prefix: str) -> None:
        """Every file under ``source`` (symlinked folders followed: the bundled lessons are
        one in a source checkout), bytecode left out."""
        for folder, dirs, files in sorted(os.walk(source, followlinks=True)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = Path(folder) / name
                rel = path.relative_to(source).as_posix()
                self.data(f"{prefix}/{rel}", path.read_bytes())  # (a compiled catalog too)

    def close(self) -> bytes:
        self.zip.close()
        return self.buffer.getvalue()


def _tutor_source(bundle: Bundle) -> None:
    import tutor

    bundle.tree(Path(tutor.__file__).resolve().parent, f"{SOURCE_DIR}/tutor")
    bundle.text(f"{SOURCE_DIR}/pyproject.toml", _pyproject())


def _lessons(bundle: Bundle, lessons: Path | None, folder: str) -> str | None:
    """The course's lesson files under ``folder`` (next to the config); their path from it."""
    if lessons is None:
        return None
    for path in sorted(lessons.glob("*.yaml")) + sorted(lessons.glob("*.yml")):
        bundle.text(f"{folder}{path.name}", path.read_text(encoding="utf-8"))
    return "lessons"


def gradescope_zip(config: AutograderConfig, lessons: Path | None) -> bytes:
    fill = {"venv": VENV, "torch": _torch_pin(), "index": TORCH_CPU_INDEX,
            "source": SOURCE_DIR, "config": CONFIG_NAME}
    bundle = Bundle()
    bundle.text("setup.sh", GRADESCOPE_SETUP.format(**fill), executable=True)
    bundle.text("run_autograder", GRADESCOPE_RUN.format(**fill), executable=True)
    config = config.model_copy(update={"lessons": _lessons(bundle, lessons, "lessons/")})
    bundle.text(CONFIG_NAME, config.model_dump_json(indent=2) + "\n")
    _tutor_source(bundle)
    return bundle.close()


def prairielearn_zip(config: AutograderConfig, lessons: Path | None,
                     questions: Sequence[tuple[str, str, str]], timeout_s: int) -> bytes:
    """``questions``: (LESSON/STEP, file name the student submits, prompt) per exercise."""
    fill = {"venv": VENV, "torch": _torch_pin(), "index": TORCH_CPU_INDEX,
            "source": SOURCE_DIR, "config": CONFIG_NAME}
    bundle = Bundle()
    grader = "serverFilesCourse/autograd_tutor"
    bundle.text(f"{grader}/run.sh", PRAIRIELEARN_RUN.format(**fill), executable=True)
    config = config.model_copy(update={"lessons": _lessons(bundle, lessons, f"{grader}/lessons/")})
    bundle.text(f"{grader}/{CONFIG_NAME}", config.model_dump_json(indent=2) + "\n")
    bundle.text("Dockerfile", PRAIRIELEARN_DOCKERFILE.format(**fill))
    files = ", ".join(name for _, name, _ in questions)
    bundle.text("README.md", PRAIRIELEARN_README.format(files=files))
    for ref, file_name, prompt in questions:
        info = {
            "uuid": "REPLACE-WITH-A-UUID",
            "title": ref,
            "topic": "autograd",
            "type": "v3",
            "singleVariant": True,
            "gradingMethod": "External",
            "externalGradingOptions": {
                "enabled": True,
                "image": "YOU/autograd-tutor-grader",
                "serverFilesCourse": ["autograd_tutor/"],
                "entrypoint": "/grade/serverFilesCourse/autograd_tutor/run.sh",
                "timeout": timeout_s,
            },
        }
        folder = ref.replace("/", "-")
        bundle.text(f"questions/{folder}/info.json", json.dumps(info, indent=2) + "\n")
        bundle.text(f"questions/{folder}/question.html", QUESTION_HTML.format(
            prompt=html.escape(prompt), file=html.escape(file_name, quote=True)))
    _tutor_source(bundle)
    return bundle.close()


def unpack(data: bytes, into: Path) -> None:
    """Extract keeping the executable bits (zipfile drops them), as the platforms do."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            target = into / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                target.chmod(mode)
