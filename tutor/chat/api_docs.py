"""What torch's own documentation says of the API a question names (``ctx.save_for_backward``,
``optimizer.zero_grad`` against ``model.zero_grad``, ``register_full_backward_hook``): the
first paragraph of each docstring, read once from the installed torch into ``api_docs.json``
(:func:`write_api_docs`), so an answer never imports torch. The answer cards say what the
course teaches; these say what each name does, for the names no card covers.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("api_docs.json")
MOST = 3
"""Names an answer quotes the documentation of, at most."""

CLASSES = {
    "Tensor": "torch.Tensor", "Module": "torch.nn.Module", "Optimizer": "torch.optim.Optimizer",
    "FunctionCtx": "torch.autograd.function.FunctionCtx", "Function": "torch.autograd.Function",
}
"""Classes whose methods learners call on their own objects, by the label a key uses."""
MODULES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
           "optim": "torch.optim", "lr_scheduler": "torch.optim.lr_scheduler",
           "autograd": "torch.autograd", "func": "torch.func", "data": "torch.utils.data"}
"""Namespaces whose members a question names as ``nn.X``, ``F.x``, ``torch.x``."""
RECEIVERS = (
    (re.compile(r"^ctx$"), "FunctionCtx"),
    (re.compile(r"optim|^opt", re.IGNORECASE), "Optimizer"),
    (re.compile(r"model|net|module|layer|encoder|decoder|^self$|^m$", re.IGNORECASE), "Module"),
)
"""What a receiver's name says it is (``optimizerD`` an optimizer, ``netG`` a module); any other
receiver is read as a tensor where Tensor has the member."""
ROLE = re.compile(r":\w+:`~?(?:[^`<]*<)?([^`>]+)>?`")
REDIRECT = re.compile(r"^(?:See|Alias for|Alias of|In-place version of) ([\w.]+)\.?$")
"""A docstring that only points at another name's: that name's is used instead (or none)."""


LONGEST = 450
"""Characters of a docstring kept: whole paragraphs of its prose, up to this many."""
SECTION = re.compile(r"^(?:Args|Arguments|Parameters|Returns?|Keyword args|Examples?|Shape|"
                     r"Attributes|Notes?|Warnings?)\s*:|^>>>", re.IGNORECASE)
"""Where a docstring's prose ends: its argument lists and examples."""


SIGNATURE_LINE = re.compile(r"^\w+\(.*\)(?: -> .*)?\n")


def _clean(doc: str) -> str:
    """A docstring's opening prose as plain Markdown on one line: whole paragraphs up to
    :data:`LONGEST` characters (not its argument lists, examples or notes), roles and
    double backquotes made single code spans."""
    kept: list[str] = []
    doc = SIGNATURE_LINE.sub("", doc.strip(), count=1)  # a builtin's own signature first
    for paragraph in doc.strip().split("\n\n"):
        # plain prose: a code span would show a parameter's name (`fn`) as if it were one of
        # the learner's or the lesson's names
        text = " ".join(ROLE.sub(lambda m: m[1], paragraph).replace("`", "").split())
        if paragraph.startswith((".. ", " ")) or "\n    " in paragraph:
            continue  # a note, a warning or a signature as a directive, or code: not prose
        if SECTION.match(paragraph.strip()) or text.endswith("::"):
            break
        if kept and len(" ".join([*kept, text])) > LONGEST:
            break
        kept.append(text if text.endswith((".", "!", "?", ":")) else f"{text}.")
    said = " ".join(kept)[:LONGEST]
    if said.endswith(":"):  # what it introduces (a list, code) was not kept
        said = said[: said.rfind(". ", 0, len(said) - 1) + 1] if ". " in said else ""
    return said


def write_api_docs(path: Path = DATA) -> None:
    """Writes ``api_docs.json`` from the installed torch."""
    import importlib
    import inspect

    import torch  # only to write the file: an answer never imports torch

    docs: dict[str, str] = {}

    def add(key: str, obj: object) -> None:
        doc = inspect.getdoc(obj)
        if doc and not doc.startswith(("Initialize self", "Return self", "Helper for",
                                       "Built-in")):  # (a builtin base class's, not torch's)
            said = _clean(doc)
            if said:
                docs[key] = said

    for label, dotted in CLASSES.items():
        module, _, name = dotted.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        for member in dir(cls):
            if not member.startswith("_"):
                add(f"{label}.{member}", getattr(cls, member, None))
    for label, dotted in MODULES.items():
        namespace = importlib.import_module(dotted)
        for member in dir(namespace):
            obj = getattr(namespace, member, None)
            if member.startswith("_") or inspect.ismodule(obj) or not callable(obj):
                continue
            add(f"{label}.{member}", obj)
    for key, said in list(docs.items()):
        pointed = REDIRECT.match(said)
        if pointed is not None:
            target = pointed[1].rstrip(".").removeprefix("torch.Tensor.")
            target = target if target.startswith(("torch.", "Tensor.")) else f"Tensor.{target}"
            if target in docs and not REDIRECT.match(docs[target]):
                docs[key] = docs[target]
            else:
                del docs[key]
    payload = {"torch": torch.__version__.split("+")[0], "docs": dict(sorted(docs.items()))}
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


@lru_cache(maxsize=1)
def _docs() -> dict[str, str]:
    docs: dict[str, str] = json.loads(DATA.read_text(encoding="utf-8"))["docs"]
    return docs


NAMED = re.compile(r"(?<![\w./])(?:(?P<recv>[A-Za-z_]\w*)\.(?P<member>[A-Za-z_]\w*)(?![\w(]*\.py\b)"
                   r"|(?P<name>[A-Za-z_]\w*)(?=\s*\(|`))")
"""A member named on something (``ctx.save_for_backward``, ``torch.no_grad``), or a call or a
code span's bare name (``register_hook(``, `` `zero_grad` ``)."""


MAKERS = frozenset({"tensor", "randn", "rand", "randint", "zeros", "ones", "arange",
                    "linspace", "eye", "full", "empty", "manual_seed", "Module", "Linear",
                    "Conv2d", "ReLU", "Sequential", "parameters", "print"})
"""Names a question's code uses to set up its example, never what it asks about."""


SENTENCE = re.compile(r"(?<=[?!。？！])|(?<=\.)\s+(?=[A-Z])|\n+")


def _asking(question: str) -> str:
    """What the question asks about: its sentences that end with a question mark, else its
    first line (an issue's title), in its prose only (no fenced block, no whole line of
    code): the API it asks about, not what its example or its story happens to call."""
    from tutor.chat.snippets import code_line

    unfenced = re.sub(r"```.*?(?:```|$)", " ", question, flags=re.DOTALL)
    prose = "\n".join(line for line in unfenced.splitlines() if not code_line(line))
    sentences = [s.strip() for s in SENTENCE.split(prose) if s and s.strip()]
    asking = [s for s in sentences if s.endswith(("?", "？"))]
    return " ".join(asking) if asking else (sentences[0] if sentences else "")


def documented(question: str) -> list[tuple[str, str]]:
    """(the name as shown, what its documentation says) for the torch API the question asks
    about (:func:`_asking`), best first: a receiver's method by what the receiver is, a
    namespace's member, a bare method the learner's objects have."""
    docs = _docs()
    found: dict[str, str] = {}
    for match in NAMED.finditer(_asking(question)):
        if (match["member"] or match["name"]) in MAKERS:
            continue
        recv, name = match["recv"], match["member"] or match["name"]
        for key in _keys(recv, name, docs):
            if "\\" not in docs[key] and docs[key] not in found.values():  # (no LaTeX)
                found.setdefault(key, docs[key])
        if len(found) >= MOST:
            break
    return list(found.items())[:MOST]


def _keys(recv: str | None, name: str, docs: dict[str, str]) -> list[str]:
    if recv in MODULES:
        key = f"{recv}.{name}"
        return [key] if key in docs else []
    if recv is not None:
        label = next((lab for pattern, lab in RECEIVERS if pattern.search(recv)), "Tensor")
        for guess in (label, "Tensor", "Module"):
            if f"{guess}.{name}" in docs:
                return [f"{guess}.{name}"]
        return []
    if "_" not in name:
        return []  # a plain word in code (`loss`, `x`) is the learner's, not torch's
    return [f"{label}.{name}" for label in CLASSES if f"{label}.{name}" in docs][:2]


def with_documentation(text: str, question: str, lang: str) -> str:
    """An English answer's text with what torch's documentation says of the API the question
    names, before its reading line where it has one; Chinese answers stay in Chinese (torch's
    documentation is in English)."""
    if lang != "en":
        return text
    named = documented(question)
    members = [name.rpartition(".")[2] for name, _ in named]
    # a name the answer already explains is left to it, unless the question names it on two
    # kinds of object (model.zero_grad against optimizer.zero_grad): both sides are quoted
    found = [(name, said) for (name, said), member in zip(named, members, strict=True)
             if said not in text and (member not in text or members.count(member) > 1)]
    if not found:
        return text
    block = "What torch's documentation says:\n" + "\n".join(
        f"- `{name}`: {said}" for name, said in found)
    head, sep, tail = text.rpartition("\n\nRead: ")
    return f"{head}\n\n{block}{sep}{tail}" if sep else f"{text.rstrip()}\n\n{block}"
