""""What does this print?": the learner's pasted snippet, found in the question and run.

The snippet is the question's fenced code; else its longest block of whole code lines (a
program pasted between sentences, however the sentences ask: before it, after it or both);
else its run of statements written inline (``x = ...; y.backward(); print(x.grad)``, each
cut where the prose after it starts). It is run like any learner code: in the confined
sandbox, with its limits. What it printed is shown only when it gives away no exercise's
expected values (the caller checks it against the open step's and the pasted exercise's
secrets).
"""

from __future__ import annotations

import re

from tutor import syntax_tree
from tutor.chat.cards import about_pytorch, canonical, mentions_output, question_kind
from tutor.chat.pasted_code import as_python
from tutor.markdown_fences import fenced_pieces
from tutor.python_names import parses

_STATEMENT_RE = re.compile(
    r"^\s*(import |from |print\(|\(|[A-Za-z_][\w.\[\]]*(\s*,\s*[A-Za-z_][\w.\[\]]*)*\s*"
    r"(=|\+=|-=|\*=|/=)|[A-Za-z_][\w.]*(\[[^\]\n]*\][\w.]*)*\(|"
    r"with |for |if |while |def |class |return\b|else:|elif |try:|except\b|finally:|@[A-Za-z_]|"
    r"del |assert |raise\b|pass\b|break\b|continue\b|global |nonlocal )"
)
_CONTINUATION_RE = re.compile(r"^\s*(else|finally|try|(elif|except)\b[^:]*)\s*:\s*(#.*)?$")
"""A clause that continues a block (``else:``, ``elif x > 2:``, ``except ValueError:``)."""
_HEADER_RE = re.compile(r"^\s*(with|for|if|while|def|class|else|elif|try|except)\b.*:\s*(#.*)?$")
_PIECE_RE = re.compile(r";|。|，(?=\s*[A-Za-z_])|\s+(?:and then|then)\s+")
_CUT_RE = re.compile(r"[\s,.?!:，。？！：、]")
"""Where a statement written inline may end and the prose after it start."""
MAX_PIECE = 400
"""Longer stretches between semicolons are prose, not a statement to look for."""
_SENTENCE_DOT_RE = re.compile(r"\.\s")


_REPL_RE = re.compile(r"\s*(?:>>>?|\.\.\.|In \[\d*\]:|Out\[\d*\]:)(?:\s|$)")
"""A line typed at (or printed by) an interactive prompt: ``>>> x.grad``, ``In [3]: ...``."""


def code_line(line: str) -> bool:
    """Whether ``line`` alone is a line of code: a statement that parses by itself, an
    indented line of a block, a block's header (``for step in range(2):``), or a line of an
    interactive session (``>>> y.backward()``)."""
    if _REPL_RE.match(line):
        return True
    if not line.strip() or not _STATEMENT_RE.match(line):
        return False
    if _CONTINUATION_RE.match(line):  # "else:" parses only after the block it continues
        return True
    if line[:1].isspace():
        return parses(line.strip()) or parses(line.strip() + " pass")
    if _HEADER_RE.match(line):
        return parses(line + "\n    pass")
    if line.startswith("@"):  # a decorator: the definition it decorates follows
        return parses(line + "\ndef f(): pass")
    return parses(line)


def _statement_in(piece: str) -> tuple[int, str] | None:
    """(where it starts, the statement) of the first statement written in ``piece`` (``If I
    write w = torch.zeros(3)`` -> ``w = torch.zeros(3)``), or None."""
    if len(piece) > MAX_PIECE:
        return None
    for start in [0, *(m.end() for m in re.finditer(r"\s+", piece))]:
        found = _longest_statement(piece[start:])
        if found is not None:
            return start, found
    return None


def _longest_statement(piece: str) -> str | None:
    """The longest start of ``piece`` that is a statement (``print(a.grad) gives ...`` ->
    ``print(a.grad)``), or None."""
    piece = piece.strip()
    if not _STATEMENT_RE.match(piece):
        return None
    ends = [m.start() for m in _CUT_RE.finditer(piece)] + [len(piece)]
    for end in sorted(set(ends), reverse=True):
        candidate = piece[:end].rstrip(" .,?!:;")
        # "print(x.grad). What" parses, as an attribute: a dot before a space ends a sentence
        if candidate and not candidate.endswith(":") and not _SENTENCE_DOT_RE.search(candidate) \
                and parses(candidate):
            return candidate
    return None


def _blocks(question: str) -> list[list[str]]:
    """Runs of consecutive whole code lines in ``question``; blank and comment lines between
    code lines belong to the program (a pasted program keeps its paragraphs and its
    commented-out lines)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    between: list[str] = []  # blank and comment lines inside a block, kept if code follows
    for line in question.splitlines():
        if current and (not line.strip() or line.lstrip().startswith("#")):
            between.append(line.rstrip() if line.strip() else "")
        elif code_line(line.rstrip()):
            current += [*between, line.rstrip()]
            between = []
        else:
            if current:
                blocks.append(current)
            current, between = [], []
    if current:
        blocks.append(current)
    return blocks


def _inline(question: str) -> str:
    """The statements written inside the question's sentences, one a line."""
    statements = []
    for piece in _PIECE_RE.split(question):
        found = _statement_in(piece)
        if found is not None:
            statements.append(found[1])
    return "\n".join(statements)


def snippet(question: str) -> str | None:
    """The code the question pastes, as a runnable program (``import torch`` added), or None
    when it pastes none that parses and prints."""
    fenced = [p.code for p in fenced_pieces(question)
              if p.code is not None and p.lang in ("", "python", "py")]
    candidates: list[str] = []
    if fenced:
        candidates.append(as_python("\n".join(block.strip("\n") for block in fenced)))
    printing = [code for b in _blocks(question) if len(b) > 1
                and "print(" in (code := as_python("\n".join(b)))]
    # a program of several lines is the code asked about; statements inside the
    # sentences around it are the learner's description of it
    candidates += sorted(printing, key=lambda code: len(code.splitlines()), reverse=True)
    candidates.append(_inline(question))
    for code in candidates:
        if "print(" not in code:
            continue
        if parses(code):
            return _with_imports(code)
    return None


def pasted_blocks(question: str, *, inline: bool = True) -> list[str]:
    """Every piece of code ``question`` pastes, printing or not, in order: its fenced code,
    else its blocks of whole code lines; and its statements written inline. What the
    learner's code does is read from these (:mod:`tutor.chat.code_facts`)."""
    fenced = [p.code for p in fenced_pieces(question)
              if p.code is not None and p.lang in ("", "python", "py")]
    if fenced:
        return [as_python(b) for b in fenced if b.strip()]
    blocks: list[list[str]] = [[]]
    prose_lines = []
    between: list[str] = []  # blank and comment lines inside a block, kept if code follows
    for line in question.splitlines():
        code = _code_prefix(line.rstrip())
        if code is not None:
            blocks[-1] += [*between, code]
            between = []
            continue
        if blocks[-1] and (not line.strip() or line.lstrip().startswith("#")):
            between.append(line.rstrip() if line.strip() else "")
            continue
        if blocks[-1]:
            blocks.append([])
        between = []
        prose_lines.append(line)
    said = _inline("\n".join(prose_lines)) if inline else ""
    return [b for b in (*(as_python("\n".join(lines)) for lines in blocks), said) if b.strip()]


def pastes_other_code(question: str) -> bool:
    """Whether ``question`` pastes code and neither the code nor its words name anything of
    PyTorch: a plain Python program ("why does ``i =+ 1`` print 1s forever?") is another
    course's question, even when it asks about an error."""
    if not pasted_blocks(question, inline=False):
        return False
    # "导数", "derivative": the words' one spelling ("梯度", "grad") is PyTorch's
    return not about_pytorch(question) and not about_pytorch(canonical(question))


def learner_code(question: str, code: str = "") -> str:
    """The code the question pastes (fenced, whole lines, written inline) and the editor's
    ``code``, as blocks separated by blank lines: what :mod:`tutor.chat.code_facts` reads."""
    parts = [*pasted_blocks(question), *([code] if code.strip() else [])]
    return "\n\n".join(parts)


def _code_prefix(line: str) -> str | None:
    """``line`` as code: the whole line when it is one, else the statement it starts with
    when that is most of it (``pred = netD(fake.detach())   <<< use detach()``)."""
    if code_line(line):
        return line
    if not line.strip() or not _STATEMENT_RE.match(line) or line[:1].isspace():
        return None
    found = _longest_statement(line)
    if found is None or not re.search(r"[(=]", found):
        return None
    rest = line.strip()[len(found):].strip()
    # what follows is a mark (``<<<``, ``->``, ``//``), or the statement is most of the line
    return found if not rest[:1].isalnum() or len(found) * 2 >= len(line.strip()) else None


_IMPORTS = (
    (re.compile(r"(?<![\w.])torch\b"), "import torch", re.compile(r"^\s*import torch\s*$", re.M)),
    (re.compile(r"\bnp\."), "import numpy as np", re.compile(r"\bimport numpy as np\b")),
    (re.compile(r"(?<![\w.])nn\."), "import torch.nn as nn", re.compile(r"\bas nn\b|import nn\b")),
    (re.compile(r"(?<![\w.])F\."), "import torch.nn.functional as F", re.compile(r"\bas F\b")),
)
"""(a name the code uses, the import it needs, how the code imports it itself): a pasted
snippet often leaves out the imports its names need."""


def _with_imports(code: str) -> str:
    """``code`` with the imports of the usual names it uses and does not import, all on its
    first line, so that error line numbers stay the learner's."""
    missing = [imp for use, imp, has in _IMPORTS if (use.search(code) or imp == "import torch")
               and not has.search(code)]
    if not missing:
        return code
    joined = "; ".join(missing) + "; " + code
    # a first line that opens a block (a decorator, a def) cannot follow "import torch;":
    # then the imports take a line of their own
    return joined if parses(joined) else "\n".join(missing) + "\n" + code


_MENTION_RE = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")


def _mention(statement: str) -> bool:
    """Whether a statement written inside a sentence names an API rather than pastes code
    (``model.eval()``, ``x.grad``): what the sentence asks about, so it stays in the prose."""
    return _MENTION_RE.match(statement) is not None and not statement.startswith("print")


def outside_fences(text: str) -> str:
    """``text`` without its fenced blocks: what a learner fences is code or its output,
    never the words of the question (a printed ``nan`` or ``Variable containing:`` is not
    what is asked)."""
    return "\n".join(p.source if p.code is None else "" for p in fenced_pieces(text))


def prose(question: str) -> str:
    """``question`` without the code it pastes (fenced blocks, whole lines and inline
    statements): the words that say what is asked."""
    lines = [line for line in outside_fences(question).splitlines()
             if not code_line(line.rstrip())]
    kept = []
    for piece in _PIECE_RE.split("\n".join(lines)):
        found = _statement_in(piece)
        # an API named inside a sentence is what it asks about; the same call alone between
        # semicolons is a pasted statement
        if found is not None and not (_mention(found[1]) and piece.strip() != found[1]):
            start, statement = found
            rest = piece[start:].strip()[len(statement):]
            piece = piece[:start] + rest
        kept.append(piece)
    return " ".join(kept)


_SENTENCE_RE = re.compile(r"(?<=[?!。？！])|(?<=\.)\s+|\n+")


def besides_output(question: str) -> str:
    """The prose of ``question`` without its sentences that ask what the code prints: the
    run answers those; what else it asks ("aren't no_grad and eval() the same?") is for an
    answer card. Empty when it asks nothing else. Cut into sentences before the code is
    taken out (taking it out joins the pieces around it)."""
    said = [p for s in _SENTENCE_RE.split(question) if s and (p := prose(s).strip())]
    return " ".join(s for s in said if question_kind(s) != "value")


def snippet_to_run(question: str) -> str | None:
    """The snippet to run for ``question``, when it asks what pasted code prints or gives
    (a "what does this print?", or its words speak of the output of code that prints:
    "it prints 202, shouldn't it be 4?") and the code is PyTorch's; else None."""
    code = snippet(question)
    # the tutor runs PyTorch code only: another language's loop is another course's
    if code is None or not about_pytorch(code.removeprefix("import torch; ")):
        return None
    if question_kind(question) == "value" or mentions_output(prose(question)):
        return code
    return None


_GRAD_READ_RE = re.compile(r"\b[A-Za-z_]\w*\.grad\b(?!_)")


def program_to_explain(question: str) -> str | None:
    """The program a "why?" question pastes, to run for the facts of its own run (why
    ``a.grad`` is None here): whole code that parses, is PyTorch's, calls ``backward`` and
    reads a ``.grad``; None when the question asks for output (:func:`snippet_to_run` runs
    that) or pastes no such program."""
    if question_kind(question) not in ("why", "fails") or snippet_to_run(question) is not None:
        return None
    for code in sorted(pasted_blocks(question, inline=False), key=len, reverse=True):
        if ".backward(" in code and _GRAD_READ_RE.search(code) and parses(code) and \
                about_pytorch(code):
            return _with_imports(code)
    return None


DIAGNOSED_KINDS = frozenset({"why", "fails"})
"""Questions that ask for the cause: with a program pasted, its own run answers them."""


def program_to_diagnose(question: str) -> str | None:
    """The program a "why does my code …" question pastes, to run and diagnose: it asks why
    or about an error (or what is wrong, or whether it works: intents.yaml), pastes a whole
    program of several lines that parses and is PyTorch's, and does not ask what it prints
    (:func:`snippet_to_run` runs that); else None. Whether it runs as pasted (a fragment
    raises NameError) only its run can tell."""
    from tutor.chat.intents import (
        asks_about_program,
        asks_loss_not_falling,
        tells_unexpected_outcome,
    )

    blocks = pasted_blocks(question, inline=False)
    said = prose(question)
    if not blocks or (question_kind(question) not in DIAGNOSED_KINDS
                      and not asks_about_program(said) and not asks_loss_not_falling(said)
                      and not tells_unexpected_outcome(said)):
        return None
    for code in sorted(blocks, key=len, reverse=True):
        lines = [line for line in code.splitlines() if line.strip()]
        if len(lines) >= 2 and parses(code) and about_pytorch(code) and _does_something(code):
            # a question about what it prints is run as such (snippet_to_run)
            return _with_imports(code) if snippet_to_run(question) is None else None
    return None


def _does_something(code: str) -> bool:
    """Whether ``code`` runs something at its top level besides imports and definitions: a
    function or class pasted alone runs nothing, so its run says nothing of the learner's."""
    import ast

    return any(
        not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                              ast.AsyncFunctionDef, ast.ClassDef))
        and any(isinstance(inner, ast.Call) for inner in ast.walk(node))
        for node in syntax_tree.parse(code).body
    )
