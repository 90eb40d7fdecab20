"""Checks of exceptions about what an op was given: shapes, dtypes, class labels, the truth
value of a tensor, a BatchNorm given one sample."""

from __future__ import annotations

import ast
import re

from tutor.diagnosis.candidate import Candidate, Ctx
from tutor.diagnosis.fixes import Fix, replace_in_line
from tutor.diagnosis.flow import text
from tutor.diagnosis.training_checks import _eval_candidates
from tutor.diagnosis.verify import runs_clean
from tutor.i18n import T


def check_linear_shape(ctx: Ctx) -> list[Candidate]:
    m = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
                  ctx.message)
    if not m:
        return []
    got, expected = int(m.group(2)), int(m.group(3))
    flow, fail = ctx.flow, ctx.fail_line or 0
    out = []
    name = None
    stmt_fail = flow.statement_at(fail)
    if stmt_fail is not None:
        for node in ast.walk(stmt_fail):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                callee = text(node.func)
                short = callee.split(".")[-1]
                if any(isinstance(s2, ast.Assign) and "Linear" in text(s2.value) and any(
                        text(t).split(".")[-1] == short for t in s2.targets)
                       for s2 in flow.statements):
                    name = callee
                    break
    if name is None:
        module = next((mc for mc in ctx.evidence.modules if mc.line in ctx.trace_lines()
                       and mc.kind == "Linear"), None)
        name = module.module if module else None
    if name:
        short = name.split(".")[-1]
        for stmt in flow.statements:
            if isinstance(stmt, ast.Assign) and any(text(t).split(".")[-1] == short
                                                    for t in stmt.targets) \
                    and "Linear" in text(stmt.value):
                line = stmt.lineno
                edit = replace_in_line(ctx.code, line, r"Linear\(\s*[^,()]+(\([^)]*\))?[^,()]*,",
                                       f"Linear({got},")
                fixes = [Fix((edit,), runs_clean,
                             T(f"give `{short}` {got} input features on line {line}",
                               f"在第 {line} 行让 `{short}` 接收 {got} 个输入特征"))
                         ] if edit else []
                out.append(Candidate("linear-in-features", line, 0.8, [
                    ("shape-mismatch", {"fail_line": fail, "shape": f"{got}",
                                        "target_shape": f"{expected}"}),
                    ("layer-defined", {"line": line, "module": short}),
                ], fixes, {"line": line, "module": short}))
                return out
    edit = replace_in_line(ctx.code, fail, r"mm\((\w+),\s*(\w+)\)", r"mm(\1, \2.T)")
    if edit is not None:
        out.append(Candidate("mm-shape-mismatch", fail, 0.6, [
            ("shape-mismatch", {"fail_line": fail, "shape": f"{got}",
                                "target_shape": f"{expected}"})],
            [Fix((edit,), runs_clean, T(f"transpose the second operand on line {fail}",
                                        f"在第 {fail} 行转置第二个操作数"))], {"line": fail}))
    return out



DTYPE_MSG = re.compile(r"(expected scalar type \w+ but found \w+|must have the same dtype|"
                       r"expected m1 and m2 to have the same dtype)")



MAKERS = ("from_numpy", "as_tensor", "tensor", "randint", "arange")



def check_dtype(ctx: Ctx) -> list[Candidate]:
    if not DTYPE_MSG.search(ctx.message):
        return []
    flow, fail = ctx.flow, ctx.fail_line or 0
    lines = [fail, *ctx.trace_lines()]
    names: set[str] = set()
    for line in lines:
        stmt = flow.statement_at(line)
        if stmt is not None:
            names |= flow.names_in(stmt)
    candidates = []
    for name in names:
        stmt = flow.assigned_before(name, max(lines) + 1)
        if stmt is None:
            continue
        value = flow.value_of(stmt)
        if value is None:
            continue
        src = text(value)
        if "from_numpy(" in src or "as_tensor(" in src or "float64" in src or \
                "double" in src or (any(f"{m}(" in src for m in MAKERS) and (
                    "np." in src or "numpy" in src or "long" in src or "randint" in src)):
            candidates.append((stmt, name))
    out = []
    for stmt, name in sorted(candidates, key=lambda p: p[0].lineno):
        line = stmt.lineno
        edit = replace_in_line(ctx.code, line, r"\s*$", ".float()") if "float64" not in \
            flow.line(line) else replace_in_line(ctx.code, line, r"torch\.float64", "torch.float32")
        fixes = [Fix((edit,), runs_clean, T(f"make `{name}` float32 where it is created (line "
                                            f"{line})", f"在创建 `{name}` 的第 {line} 行把它转为 "
                                            "float32"))] if edit else []
        out.append(Candidate("dtype-mismatch", line, 0.7, [
            ("dtype", {"fail_line": fail}), ("made-here", {"line": line, "name": name})],
            fixes, {"line": line, "name": name}))
    return out



def check_ce_target(ctx: Ctx) -> list[Candidate]:
    msg = ctx.message
    flow, fail = ctx.flow, ctx.fail_line or 0
    if "expected target dtype to be Long" in msg or "0D or 1D target tensor expected" in msg:
        cid, conv = "ce-target-dtype", ".long()"
    elif re.search(r"Target -?\d+ is out of bounds", msg):
        cid, conv = "ce-target-out-of-bounds", None
    elif "to match target batch_size" in msg:
        cid, conv = "ce-batch-mismatch", None
    else:
        return []
    out = []
    stmt = flow.statement_at(fail)
    names = flow.names_in(stmt) if stmt is not None else set()
    for line in [fail, *ctx.trace_lines()]:
        st = flow.statement_at(line)
        if st is not None:
            names |= flow.names_in(st)
    if cid == "ce-batch-mismatch":
        for name in names:
            st = flow.assigned_before(name, fail + 1)
            if st is not None and re.search(r"\.view\(\s*-1\s*,", text(st)):
                line = st.lineno
                edit = replace_in_line(ctx.code, line, r"\.view\(\s*-1\s*,\s*\d+\s*\)",
                                       ".flatten(1)")
                out.append(Candidate(cid, line, 0.75, [
                    ("batch", {"fail_line": fail}), ("view-mixes", {"line": line})],
                    [Fix((edit,), runs_clean, T(f"flatten per sample on line {line}: "
                                                "`.flatten(1)`", f"在第 {line} 行按样本展平："
                                                "`.flatten(1)`"))] if edit else [],
                    {"line": line}))
        for st in flow.statements:
            if re.search(r"\.view\(\s*-1\s*,\s*\d+\s*\)", text(st)) and st.lineno in \
                    [fail, *ctx.trace_lines()]:
                edit = replace_in_line(ctx.code, st.lineno, r"\.view\(\s*-1\s*,\s*\d+\s*\)",
                                       ".flatten(1)")
                out.append(Candidate(cid, st.lineno, 0.7, [("batch", {"fail_line": fail})],
                                     [Fix((edit,), runs_clean,
                                          T(f"flatten per sample on line {st.lineno}",
                                            f"在第 {st.lineno} 行按样本展平"))] if edit else [],
                                     {"line": st.lineno}))
        return out
    last = max([fail, *ctx.trace_lines()]) + 1
    for name in sorted(names):
        st = flow.assigned_before(name, last)
        if st is None or "tensor(" not in text(st):
            continue
        line = st.lineno
        fixes = []
        if conv:
            edit = replace_in_line(ctx.code, line, r"\s*$", conv)
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(f"make the labels integer class indices "
                                                        f"on line {line}: `{conv}`",
                                                        f"在第 {line} 行把标签转为整数类别索引："
                                                        f"`{conv}`")))
        else:
            edit = replace_in_line(ctx.code, line, r"tensor\(\[([^\]]*)\]\)", "tensor([\\1]) - 1")
            if edit is not None:
                fixes.append(Fix((edit,), runs_clean, T(f"number the labels from 0 on line {line}",
                                                        f"在第 {line} 行让标签从 0 开始编号")))
        out.append(Candidate(cid, line, 0.6, [("labels", {"fail_line": fail}),
                                              ("made-here", {"line": line, "name": name})],
                             fixes, {"line": line, "name": name}))
    return out



def check_bool(ctx: Ctx) -> list[Candidate]:
    if "value of Tensor with more than one value is ambiguous" not in ctx.message:
        return []
    line = ctx.fail_line or 0
    stmt = ctx.flow.statement_at(line)
    fixes = []
    if isinstance(stmt, (ast.If, ast.While)):
        edit = replace_in_line(ctx.code, line, r"^(\s*)(if|while)\s+(.*):\s*$",
                               r"\1\2 bool((\3).all()):")
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(f"say which you mean on line {line}: all "
                                                    "elements (`.all()`) or any (`.any()`)",
                                                    f"在第 {line} 行说明你的意思："
                                                    "所有元素（`.all()`）"
                                                    "还是任一元素（`.any()`）")))
    return [Candidate("bool-ambiguous", line, 0.75, [("bool", {"line": line})], fixes,
                      {"line": line})]



def check_batchnorm_train(ctx: Ctx) -> list[Candidate]:
    if "Expected more than 1 value per channel when training" not in ctx.message:
        return []
    return _eval_candidates(ctx, "batchnorm-single-sample", batchnorm=True)
