"""Names a solution defines and names a check expression reads (``tutor.python_names``)."""

from __future__ import annotations

import pytest

from tutor.python_names import defined_names, free_names


def test_module_level_bindings():
    source = (
        "import torch, numpy.linalg\n"
        "from torch import nn as neural\n"
        "a = b = 1\n"
        "c: int = 2\n"
        "d += 1\n"
        "if (e := 3):\n"
        "    f = 4\n"
        "for g, (h, *i) in []:\n"
        "    pass\n"
        "with open('x') as j, open('y') as (k, l):\n"
        "    pass\n"
        "try:\n"
        "    pass\n"
        "except Exception as m:\n"
        "    pass\n"
        "def n(p):\n"
        "    q = p\n"
        "    global r\n"
        "    r = q\n"
        "class S:\n"
        "    t = 1\n"
        "u = [v for v in range(3)]\n"
        "w = lambda z: z\n"
    )
    assert defined_names(source) == set("abcdefghijklmnruw") | {"S", "torch", "numpy", "neural"}


def test_unknowable_sources_give_none():
    assert defined_names("from torch import *") is None
    assert defined_names("x = (") is None


def test_free_names_skip_attributes_and_local_bindings():
    assert free_names("x.grad + y[0]") == {"x", "y"}
    assert free_names("[v * k for v in vals]") == {"k", "vals"}
    assert free_names("(lambda a, *b, c=1, **d: a + e)(1)") == {"e"}
    assert free_names("  z.norm()  ") == {"z"}
    with pytest.raises(SyntaxError):
        free_names("x +")


def test_a_global_counts_where_a_function_assigns_it_only():
    source = ("def f():\n    global made, named\n    made = 1\n"
              "class C:\n    global too\n    too = 2\n")
    assert defined_names(source) == {"f", "C", "made", "too"}


def test_a_star_import_anywhere_at_module_level_is_unknowable():
    assert defined_names("try:\n    from torch import *\nexcept ImportError:\n    pass\n") is None
    assert defined_names("x = 1\0") is None


def test_free_names_of_nested_scopes():
    assert free_names("[lambda: v + w for v in vals]") == {"vals", "w"}
    assert free_names("[(z := v) for v in vals] + [z]") == {"vals"}  # the walrus binds z
    assert free_names("{k: v for k, v in d.items()}") == {"d"}
    assert free_names("sum(x for x in range(n))") == {"sum", "range", "n"}
