"""Diagnosis from evidence: re-run the program with instrumentation, reason over what it saw
and over the source, try the proposed fixes in the sandbox, and rank what is left.

A normal run pays nothing for this: it happens only when a run failed or a diagnosis is
asked for. Candidates whose fix was verified come first; a fix shown not to work is never
shown; when the evidence leaves several causes, the first names the others and how to tell
them apart.
"""

from __future__ import annotations

import ast
import difflib
import re
import time
from typing import TYPE_CHECKING

from tutor.diagnosis import engine
from tutor.diagnosis.advice import as_tried, proposes_change, subject_snippets
from tutor.diagnosis.catalog import FACT_PLACEHOLDERS, TEXT_FIELDS, Entry, load_catalog
from tutor.diagnosis.checks import (
    Candidate,
    Ctx,
    candidates,
    counts_late,
    counts_whole_run,
)
from tutor.diagnosis.filling import fill, first_fitting, tidied
from tutor.diagnosis.fixes import (
    SERIES,
    VERIFY_LIMITS,
    Fix,
    apply,
    diff,
    patched,
    replace_nodes,
)
from tutor.diagnosis.flow import Flow
from tutor.diagnosis.intent import read_intent
from tutor.diagnosis.messages import for_learner
from tutor.diagnosis.models import Diagnosis
from tutor.diagnosis.silencers import silencers
from tutor.diagnosis.source import Source
from tutor.diagnosis.trial_runs import Trial, TrialRuns, cores
from tutor.diagnosis.verify import (
    hides_bug,
    loses_change,
    prints_else,
    prints_the_same,
    runs_clean,
)
from tutor.i18n import T, Text
from tutor.sandbox.models import ErrorInfo, Evidence, Limits, RunBudget, RunResult

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner

NEW_MISTAKE = 0.8
"""How sure a check must be of a mistake a fix's run shows, and the program's did not, for the
fix to be refused as bringing it."""
SIDE_EFFECTS = frozenset({"train-mode-not-restored", "optimizer-grads-never-cleared",
                          "nan-from-op", "nan-outside-domain"})
"""Mistakes a change can bring by moving or deleting a line of a training loop (the train()
the next epoch needs, the zero_grad() of the next pass, a value pushed to an edge). Not the
ones a fix may mean to bring about: a freeze spelt right freezes, and that is not a mistake."""
MAX_FIX_RUNS = 6
PEEK = RunBudget(backwards=5, steps=5)
"""The first passes of a silent bug's training, whose checks start the fix trials early."""
PEEK_AFTER_MS = 100.0
"""A silent bug's run at least this long gets a peek beside its re-run (a shorter one's
re-run is back before the peek would pay)."""
LOCAL_EDITS = frozenset({"replace", "insert_before", "insert_after"})
FIX_BUDGET_S = 3.0


def chain_text(cand: Candidate) -> list[Text]:
    """The candidate's evidence, step by step; a step whose facts the run did not show is
    left out rather than shown with a gap."""
    catalog = load_catalog()
    shown = (first_fitting(catalog.step_options(key), values) for key, values in cand.steps)
    return [step for step in shown if step is not None]


def _render(entry: Entry, cand: Candidate, result: RunResult, code: str) -> Diagnosis | None:
    """The catalog entry's text for a candidate found from evidence; None when its words
    need a fact this run did not show."""
    if entry.check is not None:
        values = {**cand.fill, "line": cand.root_line}
        title, explanation, fix = (first_fitting(entry.options(f), values) for f in TEXT_FIELDS)
        if title is None or explanation is None or fix is None:
            return None
        return Diagnosis(id=entry.id, severity=entry.severity, title=title,
                         explanation=explanation, fix=fix, line=cand.root_line,
                         lesson_ref=entry.lesson_ref, generic=entry.generic)
    if entry.pitfall is not None:
        return engine.build_pitfall(entry, cand.root_line, str(cand.fill.get("name") or "")
                                    or None, facts=cand.fill)
    if entry.match is not None and entry.match.warning is not None:
        for warning in result.warnings:
            found = engine.match_warning(warning, Source.of(code))
            if found is not None and found.id == entry.id:
                return found
    error = result.error
    message = entry.match.pattern().search(error.message) if (
        entry.match is not None and error is not None) else None
    ctx = engine.Context(source=Source.of(code), line=error.line if error else cand.root_line,
                         locals=dict(error.locals) if error else {})
    return engine.build(entry, ctx, message, error.line if error else cand.root_line,
                        facts=cand.fill)


def cand_keys(cand: Candidate) -> set[str]:
    return {k for k, v in cand.fill.items() if v is not None}


def _possibly(title: Text) -> Text:
    """A diagnosis's title said as a lead, not as the settled cause."""
    first = title.en.split(" ", 1)[0]
    # "Line 3 ..." / "A value ..." read on after "Possibly:"; a name ("BatchNorm") keeps its case
    plain = first.isalpha() and first[1:] == first[1:].lower()
    en = title.en[:1].lower() + title.en[1:] if plain else title.en
    return T(f"Possibly: {en}", f"可能的原因：{title.zh}")


def _tell_apart(ranked: list[Candidate], failed: dict[int, list[tuple[Text, Text | None]]]
                ) -> Text | None:
    """No tried change settled the cause: the places the evidence points at, in its order
    but none called the likely one, each in the words of the evidence step that names it
    (never stated as the cause), and how to tell them apart (what was tried and did not fix
    it, so it is not the whole answer). None when the evidence names no place."""
    places: dict[int, Text] = {}
    tried: list[int] = []
    for cand in ranked:
        steps = chain_text(cand)
        if cand.root_line and cand.root_line not in places and steps:
            places[cand.root_line] = steps[-1]
        if failed.get(id(cand)) and cand.root_line not in tried:
            tried.append(cand.root_line)
    top = failed.get(id(ranked[0]), []) if ranked else []
    if not places or (len(places) == 1 and top and all(why is not None for _, why in top)):
        # one place, whose change made the error go away and was refused only because it
        # hid the bug: the evidence settles the place, not the change
        return None
    lines = list(places)[:3]
    first, rest = lines[0], lines[1:]

    def place(line: int) -> tuple[str, str]:
        step = places[line]
        named = str(line) in step.en
        return (step.en if named else f"line {line}: {step.en}",
                step.zh if named else f"第 {line} 行：{step.zh}")

    # the places, not a ranking: on programs nobody here wrote, the one the evidence ranked
    # first when no change was tried or none worked was wrong as often as not (the judged
    # sets: no such diagnosis was right), so none is called the likely cause
    en = [f"The evidence does not settle the cause. Where it points: {place(first)[0]}."]
    zh = [f"证据还不能确定原因。它指向：{place(first)[1]}。"]
    for line in rest:
        en.append(f"It also points here: {place(line)[0]}.")
        zh.append(f"它也指向：{place(line)[1]}。")
    shown_tried = [n for n in tried if n in lines]
    if shown_tried and len(shown_tried) == len(lines) and rest:
        en.append("Each of these was changed alone in a re-run, and none fixed it: they may "
                  "need to change together, or the cause is earlier, where the value they "
                  "change was made.")
        zh.append("重新运行时分别单独改过其中每一处，都没有修好：它们可能需要一起改，"
                  "或者原因更早，在它们所改的值被创建的地方。")
    elif shown_tried:
        listed = " or ".join(f"line {n}" for n in shown_tried)
        listed_zh = "或".join(f"第 {n} 行" for n in shown_tried)
        en.append(f"Changing {listed} alone, tried in a re-run, did not fix it.")
        zh.append(f"重新运行时试过只改{listed_zh}，没有修好。")
    if rest and not (shown_tried and len(shown_tried) == len(lines)):
        en.append("To tell them apart, change one of these lines at a time and run again: "
                  "the one whose change makes the error go away without breaking what the "
                  "program computes is the cause.")
        zh.append("要区分它们，每次只改其中一行再运行：改动后错误消失、且程序算的东西没有被破坏的"
                  "那一行就是原因。")
    elif not rest:
        en.append(f"To tell, look at the values line {first} makes and uses, in the order the "
                  "program runs, before changing it.")
        zh.append(f"要确认，先按程序运行的顺序查看第 {first} 行产生和用到的值，再去改它。")
    return T(" ".join(en), "".join(zh))


class _Trials:
    """The fix trials of one diagnosis, within a budget of runs (and time, as a safety net)."""

    def __init__(self, code: str, rerun: RunResult, budget: RunBudget | None,
                 runs: TrialRuns) -> None:
        self.code, self.rerun, self.budget, self.pool = code, rerun, budget, runs
        self.started, self.runs = time.monotonic(), 0
        self.intent = read_intent(Flow.of(code))
        self.hiding: dict[int, Text] = {}
        """What a fix did that hides the bug, by ``id(fix)``: it ran, and was refused."""
        self.plan: list[Trial] = []
        """What the trials will run next (:func:`_next_trials`)."""
        self.before: set[str] | None = None
        """The ids of the candidates the program itself gives rise to (computed once)."""

    def ahead(self, trials: list[Trial]) -> None:
        self.plan = trials
        self.pool.ahead(trials)

    def spent(self) -> bool:
        return self.runs >= MAX_FIX_RUNS or time.monotonic() - self.started > FIX_BUDGET_S

    def run(self, code: str, fix: Fix) -> RunResult:
        """The instrumented run of the program ``fix`` made, as much of it as ``fix``'s
        expectation reads. Each trial counts against the budget, even one whose program
        already ran (two fixes may write the same program): the trials stop where they
        stopped when each program ran in turn."""
        self.runs += 1
        return self.pool.result(Trial(code, fix.budget(self.budget)))

    def attempt(self, fix: Fix) -> tuple[str, Text, Text] | None:
        """(patch, what the fix does, what its re-run showed) when the fix works, possibly
        after one more fix for the next error it uncovered."""
        new = apply(self.code, fix.edits)
        if new is None or new == self.code:
            return None
        fixed = self.run(new, fix)
        shown = self._shows(fix, fixed, new)
        if shown is not None:
            return diff(self.code, new), fix.describe, shown
        if fixed.error is None or fixed.evidence is None or not _progressed(self.rerun, fixed):
            return None
        return self._follow(fix, new, fixed)

    def _shows(self, fix: Fix, fixed: RunResult, new: str) -> Text | None:
        """What the fixed run (of the program ``new``) shows when it does what the fix
        promised and nothing that hides the bug instead (:func:`verify.hides_bug`)."""
        shown = fix.expect(self.rerun, fixed)
        if shown is None or prints_the_same(self.rerun, fixed):
            return None
        hidden = hides_bug(self.rerun, fixed, self.intent) or loses_change(self.code, new)
        if hidden is None and fix.keeps is not None:
            hidden = fix.keeps(self.rerun, fixed)
        if hidden is None:
            hidden = self._new_mistake(new, fixed)
        if hidden is not None:
            self.hiding[id(fix)] = _renumbered(hidden, self.code, new)
            return None
        return shown

    def _new_mistake(self, new: str, fixed: RunResult) -> Text | None:
        """A silent program's fix whose run shows a confident mistake of a kind the program
        did not show before (a train() deleted to predict in eval mode, so the next epoch
        trains in eval mode): what it brought, in the words of the check that found it."""
        if self.rerun.error is not None or fixed.outcome != "ok" or fixed.evidence is None or \
                self.rerun.evidence is None:
            return None
        flow = Flow.of(new)
        if flow is None:
            return None
        if self.before is None:
            old = Flow.of(self.code)
            self.before = {c.id for c in candidates(Ctx(
                code=self.code, flow=old, result=self.rerun, evidence=self.rerun.evidence,
                error=None))} if old is not None else set()
        brought = [c for c in candidates(Ctx(code=new, flow=flow, result=fixed,
                                             evidence=fixed.evidence, error=None))
                   if c.confidence >= NEW_MISTAKE and c.id in SIDE_EFFECTS
                   and c.id not in self.before]
        if not brought:
            return None
        entry = load_catalog().get(brought[0].id)
        said = first_fitting([entry.title, *(v.title for v in entry.variants if v.title)],
                             brought[0].fill)
        if said is None:
            return T("with this change the run shows another mistake", "改动后运行出现了另一个问题")
        return T(f"with this change the run shows another mistake: {said.en}",
                 f"改动后运行出现了另一个问题：{said.zh}")

    def _follow(self, fix: Fix, new: str, fixed: RunResult) -> tuple[str, Text, Text] | None:
        """The first fix made the program go further and fail differently: a check of that
        failure proposes the next change, and the pair counts only if it does what the first
        fix promised."""
        flow = Flow.of(new)
        if flow is None or fixed.evidence is None:
            return None
        ctx = Ctx(code=new, flow=flow, result=fixed, evidence=fixed.evidence, error=fixed.error)
        follow_ups = [(second, final) for cand in sorted(candidates(ctx),
                                                         key=lambda c: -c.confidence)[:2]
                      for second, final in _follow_ups(new, cand.fixes[:2])]
        # the first follow-up runs now (the others only if it fails); the plan goes on after
        finals = [Trial(final, fix.budget(self.budget)) for _, final in follow_ups]
        self.pool.ahead([*finals[:1], *self.plan])
        for second, final in follow_ups:
            if self.spent():
                return None
            shown = self._shows(fix, self.run(final, fix), final)
            if shown is not None:
                then = _renumbered(second.describe, self.code, new)
                both = T(f"{fix.describe.en}; then {then.en}",
                         f"{fix.describe.zh}；然后{then.zh}")
                return diff(self.code, final), both, shown
        return None


def _follow_ups(new: str, fixes: list[Fix]) -> list[tuple[Fix, str]]:
    """The follow-up fixes worth a run, with the program each makes of ``new``."""
    out = []
    for second in fixes:
        if any(e.kind not in LOCAL_EDITS for e in second.edits):
            continue  # a follow-up repairs what the first change uncovered; it does not
            # remove or reorder the learner's statements
        final = apply(new, second.edits)
        if final is not None and final != new:
            out.append((second, final))
    return out


def _renumbered(text: Text, before: str, after: str) -> Text:
    """``text``, written about ``after`` (the program as a first change left it), with each
    line number that of the same line in ``before``, the learner's program: the numbers the
    learner sees are their own (a changed or inserted line: the learner's line it replaced,
    or the one it was inserted before)."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(),
                                      autojunk=False)
    back: dict[int, int] = {}
    for _, a1, a2, b1, b2 in matcher.get_opcodes():
        for k in range(b2 - b1):
            back[b1 + k + 1] = a1 + min(k, max(a2 - a1 - 1, 0)) + 1

    def number(found: re.Match[str]) -> str:
        line = int(found.group(2))
        return f"{found.group(1)}{back.get(line, line)}"

    return Text(en=re.sub(r"(\bline )(\d+)", number, text.en),
                zh=re.sub(r"(第 ?)(\d+)", number, text.zh))


def _progressed(before: RunResult, after: RunResult) -> bool:
    """The fixed program fails in another way than the original (another message or line)."""
    old, new = before.error, after.error
    if old is None or new is None:
        return False
    return (old.type, old.message, old.line) != (new.type, new.message, new.line)


def _verified(code: str, found: list[Candidate], rerun: RunResult, budget: RunBudget | None,
              runs: TrialRuns, failed: dict[int, list[tuple[Text, Text | None]]]
              ) -> dict[int, tuple[str, Text, Text]]:
    """Each candidate's fixes in turn, most confident first, until one of a confident
    candidate works; keyed by ``id(candidate)``. What was tried and did not work goes to
    ``failed``, by candidate: what the fix does, and what it did that hides the bug when it
    ran but was refused. The trials run ahead on ``runs``' workers; their order and their
    results are those of trials run one after another."""
    trials = _Trials(code, rerun, budget, runs)
    verified: dict[int, tuple[str, Text, Text]] = {}
    order = sorted(found, key=lambda c: -c.confidence)
    for at, cand in enumerate(order):
        for index, fix in enumerate(cand.fixes):
            if trials.spent():
                return verified
            trials.ahead(_next_trials(code, order, at, index, trials.budget))
            worked = trials.attempt(fix)
            if worked is not None:
                verified[id(cand)] = worked
                break
            failed.setdefault(id(cand), []).append((fix.describe, trials.hiding.get(id(fix))))
        if id(cand) in verified and cand.confidence >= 0.8:
            break
    return verified


def _next_trials(code: str, order: list[Candidate], at: int, index: int,
                 budget: RunBudget | None) -> list[Trial]:
    """The trials the loop of :func:`_verified` runs from its trial of fix ``index`` of
    candidate ``at`` on, whatever the trials show: this one, and the first fix of each next
    candidate while no candidate before it stops the loop by working with confidence >= 0.8
    (a candidate's other fixes run only if its first fails)."""
    trials: list[Trial] = []
    for position in range(at, len(order)):
        cand = order[position]
        for fix in cand.fixes[index if position == at else 0:]:
            new = apply(code, fix.edits)
            if new is not None and new != code:
                trials.append(Trial(new, fix.budget(budget)))
                break
        if cand.confidence >= 0.8:
            break
    return trials[:MAX_FIX_RUNS]


def diagnose(code: str, result: RunResult, runner: Runner, *, device: str = "cpu",
             try_fixes: bool = True, workers: int | None = None) -> list[Diagnosis]:
    """The run's diagnoses, the first reasoned from evidence when the evidence finds a cause.

    ``result`` is the learner's run as it was shown; the evidence comes from a deterministic
    instrumented re-run of the same code. ``workers``: how many fix trials run at once
    (default: the cores); the diagnoses are the same for any number."""
    return diagnose_with_evidence(code, result, runner, device=device, try_fixes=try_fixes,
                                  workers=workers)[0]


SLOWER = 3.0
"""How much longer than the learner's run its instrumented re-run and each trial may take
(the instrumentation's own cost, two runs at once on the cores)."""
MAX_TRIAL_S = 30.0


def trial_limits(result: RunResult) -> Limits:
    """The limits of the re-run and the fix trials: :data:`VERIFY_LIMITS`, or for a program
    whose own run took longer (a training of a few seconds), that run's time times
    :data:`SLOWER`, up to :data:`MAX_TRIAL_S`: a re-run cut by the clock shows nothing."""
    wanted = result.duration_ms / 1000 * SLOWER
    if wanted <= VERIFY_LIMITS.wall_time_s:
        return VERIFY_LIMITS
    return VERIFY_LIMITS.model_copy(update={"wall_time_s": min(wanted, MAX_TRIAL_S)})


def diagnose_with_evidence(code: str, result: RunResult, runner: Runner, *,
                           device: str = "cpu", try_fixes: bool = True,
                           workers: int | None = None
                           ) -> tuple[list[Diagnosis], Evidence | None]:
    """:func:`diagnose` and the evidence it reasoned over (None when there was no re-run)."""
    from tutor.diagnosis import explain

    base = explain(result, code)
    flow = Flow.of(code)
    if flow is None or result.outcome not in ("ok", "error"):
        return base, None
    runs = TrialRuns(runner, device, trial_limits(result),
                     cores() if workers is None else workers)
    try:
        rerun, budget = _rerun(code, result, flow, runs, try_fixes)
        if rerun.evidence is None:
            return base, None
        evidence = rerun.evidence
        error = rerun.error if rerun.outcome == "error" else None
        if (error is None) != (result.error is None):
            return base, None  # the re-run did not behave like the run: no evidence about it
        found = _reason(code, result, rerun, budget, flow, error, base, runs, try_fixes)
    finally:
        runs.close()
    if error is not None and try_fixes and found:
        found = [_unconfirmed(found[0]), *found[1:]]
    if error is None and try_fixes and not any(d.fix_verified for d in found):
        hidden = _hidden_error(code, result, flow, runner, device, workers)
        found = [hidden, *found] if hidden is not None else found
    return [tidied(as_tried(d)) for d in found], evidence


def _hidden_error(code: str, result: RunResult, flow: Flow, runner: Runner, device: str,
                  workers: int | None) -> Diagnosis | None:
    """The error a silencer of the program (``strict=False``, an ``except`` that passes)
    hid, diagnosed on the program without it: the silent bug's cause. That diagnosis's tried
    fix, with the silencer taken away, is given when the learner's program so changed runs
    and prints something else than it did (what they saw was the silent bug's symptom)."""
    for quiet in silencers(code, flow):
        shown = runner.run(quiet.code, device=device, limits=VERIFY_LIMITS)
        if shown.outcome != "error" or shown.error is None:
            continue
        inner = diagnose(quiet.code, shown, runner, device=device, workers=workers)
        first = inner[0] if inner else None
        if first is None or first.generic or first.severity != "error":
            continue
        message = for_learner(shown.error.message).strip().splitlines()[0].rstrip(":")
        hid = fill(load_catalog().steps["silencer-hid"], {
            "line": quiet.line, "detail": quiet.what, "fail_line": shown.error.line or quiet.line,
            "why": f"{shown.error.type}: {message}"})
        update: dict[str, object] = {
            "chain": [hid, *first.chain], "patch": None, "fix_check": None,
            "fix_verified": None, "fix": T(f"{first.fix.en}; and {quiet.undo.en}",
                                           f"{first.fix.zh}；并且{quiet.undo.zh}")}
        fixed = patched(quiet.code, first.patch) if first.fix_verified and first.patch else None
        after = runner.run(fixed, device=device, limits=VERIFY_LIMITS) if fixed else None
        shows = prints_else(result, after) if after is not None else None
        if fixed is not None and shows is not None:
            update.update(patch=diff(code, fixed), fix_verified=True, fix_check=shows)
        return first.model_copy(update=update)
    return None


def _unconfirmed(diagnosis: Diagnosis) -> Diagnosis:
    """An error's diagnosis picked by its message whose fix no trial checked gives no fix,
    only where to look: on programs nobody here wrote, specific diagnoses of errors whose
    fix was not tried were wrong far more often than right (17 wrong, 4 right in the judged
    sets of 2026-12-03 to -06).
    The evidence's own findings and their directions stay, and so does advice an entry
    marks as settled by the message (``untried_fix``)."""
    if diagnosis.generic or diagnosis.fix_verified is not None or diagnosis.fix_failed or \
            diagnosis.line is None or diagnosis.severity != "error":
        return diagnosis
    catalog = load_catalog()
    entry = next((e for e in catalog.entries if e.id == diagnosis.id), None)
    if entry is None or entry.match is None or entry.check is not None or entry.untried_fix:
        return diagnosis  # the evidence's own finding, or advice the message settles
    fail_line = diagnosis.line
    root = diagnosis.root_line or fail_line
    key = "fix-untried" if root < fail_line else "fix-untried-here"
    return diagnosis.model_copy(update={"fix": fill(catalog.steps[key],
                                                    {"line": root, "fail_line": fail_line})})


def _catalog_snippets(entry: Entry, diagnosis: Diagnosis, flow: Flow, code: str
                      ) -> Candidate | None:
    """The code the message's own fix writes for this run (a method chain on the subject,
    ``image.unsqueeze(0)``), as changes to try: the snippet put where the diagnosis's line
    uses the subject (in place of the subject's own call of the snippet's last method, when
    the line makes one: ``x.numpy()`` -> ``x.detach().numpy()``). A candidate of the
    message's diagnosis with no evidence steps, tried after the evidence's own; None when
    the words have no such code or the line does not use the subject."""
    line = diagnosis.line or 0
    stmt = flow.statement_at(line)
    if stmt is None:
        return None
    fixes = []
    for subject, snippet in subject_snippets(entry, diagnosis.fix):
        last = snippet.rsplit(".", 1)[-1].split("(")[0]
        uses = [n for n in ast.walk(stmt) if isinstance(n, ast.expr)
                and ast.unparse(n) == subject and not isinstance(getattr(n, "ctx", None),
                                                                   ast.Store)]
        changes: list[tuple[ast.AST, str]] = []
        for use in uses:
            parent = flow.parents.get(use)
            call = flow.parents.get(parent) if parent is not None else None
            if isinstance(parent, ast.Attribute) and parent.attr == last and isinstance(
                    call, ast.Call) and call.func is parent:
                changes.append((call, snippet))
            elif not isinstance(parent, ast.Attribute):
                changes.append((use, snippet))
        edit = replace_nodes(code, changes[:1]) if changes else None
        if edit is not None:
            fixes.append(Fix((edit,), runs_clean, T(f"on line {line} use `{snippet}`",
                                                   f"第 {line} 行改用 `{snippet}`")))
    return Candidate(diagnosis.id, line, 0.5, [], fixes) if fixes else None





def _with_operands(base: list[Diagnosis], rerun: RunResult) -> list[Diagnosis]:
    """A generic diagnosis of an error a torch op raised, with what the re-run saw that op
    given: each operand's name, shape, dtype and device, and the line that made it (the
    values the generic advice would otherwise ask the learner to print)."""
    failed = rerun.evidence.failed if rerun.evidence is not None else None
    if not base or not base[0].generic or failed is None or not failed.inputs or \
            base[0].chain:
        return base
    steps = load_catalog().steps
    chain = []
    for given in failed.inputs[:4]:
        shape = "(" + ", ".join(str(n) for n in given.shape) + ("," if len(given.shape) == 1
                                                              else "") + ")"
        made = [f"made by `{given.op}` on line {given.line}"] if given.op and given.line else []
        made_zh = [f"由第 {given.line} 行的 `{given.op}` 得到"] if given.op and given.line else []
        grad = ["requires grad"] if given.requires_grad else []
        device = [given.device] if given.device else []
        dtype = [given.dtype.removeprefix("torch.")] if given.dtype else []
        chain.append(fill(steps["operand-given"], {
            "fail_line": failed.line, "op": failed.op, "shape": shape,
            "name": Text(f"`{given.name}`", f"`{given.name}`") if given.name else Text(
                f"its argument {given.arg}", f"参数 {given.arg}"),
            "detail": Text(", ".join([*dtype, *device, *grad, *made]),
                           "，".join([*dtype, *device, *(["需要梯度"] if grad else []),
                                     *made_zh]))}))
    update: dict[str, object] = {"chain": chain}
    if base[0].fix.en.startswith("Look at the values on that line"):  # they are shown now
        update["fix"] = T(
            f"Compare what line {failed.line} gave `{failed.op}` (above) with what the message "
            "says it expects, and change the value that differs where it is made.",
            f"把第 {failed.line} 行交给 `{failed.op}` 的值（见上）与错误信息所说的要求对比，"
            "在不符合的那个值得到的地方修改它。")
    return [base[0].model_copy(update=update), *base[1:]]


def _rerun(code: str, result: RunResult, flow: Flow, runs: TrialRuns, try_fixes: bool
           ) -> tuple[RunResult, RunBudget | None]:
    """The instrumented re-run, and its budget: of a silent bug, what the recording keeps of
    its training (:data:`SERIES`; the whole run where a check that counts the whole run's
    events finds a candidate in one cut short, or where the program makes such events on a
    condition: :func:`checks.counts_whole_run`, :func:`checks.counts_late`); of an error, up
    to the error. A silent bug's re-run that takes a while
    runs beside a peek at its first passes (:data:`PEEK`): the fixes the checks propose from
    the peek start their trials on the other core meanwhile (on the dev and test programs,
    each trial so started was one the re-run's checks asked for). The diagnosis reasons over the
    re-run alone, and uses a trial run ahead only where it asks for that same trial."""
    if result.error is not None or counts_late(flow):
        return runs.result(Trial(code)), None
    main = Trial(code, SERIES)
    if try_fixes and result.duration_ms >= PEEK_AFTER_MS and runs.workers >= 2:
        runs.ahead([main])
        peek = runs.result(Trial(code, PEEK))
        if peek.evidence is not None and peek.outcome == "ok":
            ctx = Ctx(code=code, flow=flow, result=peek, evidence=peek.evidence, error=None)
            known = {e.id for e in load_catalog().entries}
            order = sorted((c for c in candidates(ctx) if c.id in known),
                           key=lambda c: -c.confidence)
            runs.ahead([main, *_next_trials(code, order, 0, 0, SERIES)])
    rerun = runs.result(main)
    if rerun.evidence is None or rerun.evidence.cut is None or not counts_whole_run(Ctx(
            code=code, flow=flow, result=rerun, evidence=rerun.evidence, error=rerun.error)):
        return rerun, SERIES
    return runs.result(Trial(code)), None


def _reason(code: str, result: RunResult, rerun: RunResult, budget: RunBudget | None,
            flow: Flow, error: ErrorInfo | None, base: list[Diagnosis], runs: TrialRuns,
            try_fixes: bool) -> list[Diagnosis]:
    assert rerun.evidence is not None
    ctx = Ctx(code=code, flow=flow, result=rerun, evidence=rerun.evidence, error=error)
    found = candidates(ctx)
    base = [d for d in base if d.id not in ctx.refuted]
    catalog = load_catalog()
    known = {e.id for e in catalog.entries}
    found = [c for c in found if c.id in known]
    first = base[0] if base and base[0].severity == "error" else None
    if first is not None and not first.generic and first.id in known and try_fixes:
        snippets = _catalog_snippets(catalog.get(first.id), first, flow, code)
        if snippets is not None:
            found.append(snippets)
    if not found:
        return _with_operands(base, rerun)
    failed: dict[int, list[tuple[Text, Text | None]]] = {}
    verified = _verified(code, found, rerun, budget, runs, failed) if try_fixes else {}
    # a claim only its own trial establishes is not said where that trial failed (or none ran)
    found = [c for c in found if id(c) in verified or not c.only_if_tried]
    if not found:
        return _with_operands(base, rerun)
    if error is None and try_fixes:
        # nothing failed: a suspicion whose fix did not make the symptom go away is not
        # shown as a cause (it may be how the program is meant to work)
        # (a symptom the evidence pins by itself, with no change to try, stays)
        found = [c for c in found if id(c) in verified or c.pinned]
        if not found:
            return base
    ranked = sorted(found, key=lambda c: (id(c) not in verified, -c.confidence, c.root_line))
    top = ranked[0]
    entry = catalog.get(top.id)
    if first is not None and not first.generic and id(top) not in verified and (
            first.id != top.id) and not top.pinned:
        shown_diag = first  # the message's own diagnosis, with the evidence as context
    elif first is not None and first.id == top.id:
        # the message's words, with the facts the evidence established where they use one
        # (the text and the chain then name the same value and line)
        facts = FACT_PLACEHOLDERS & cand_keys(top)
        shown_diag = (_render(entry, top, rerun, code) if facts else None) or first
    else:
        rendered = _render(entry, top, rerun, code)
        if rendered is None:  # the entry's words need a fact this run did not show
            if first is None:
                return base
            rendered = first
        shown_diag = rendered
    if shown_diag.id != top.id:
        # the message's own diagnosis stays; the evidence's unverified guess is an alternative
        update: dict[str, object] = {
            "root_line": shown_diag.line,
            "alternatives": list(dict.fromkeys(c.id for c in ranked[:3]
                                               if c.id != shown_diag.id)),
            "tell_apart": _tell_apart(ranked, failed),
        }
    else:
        # a symptom shown for want of a cause (a generic, pinned candidate) is no rival of
        # a cause whose change was tried and worked
        rivals = [c for c in ranked[1:] if not (id(top) in verified and c.pinned
                                                 and not c.fixes and catalog.get(c.id).generic)]
        update = {
            "root_line": top.root_line, "chain": chain_text(top),
            "alternatives": list(dict.fromkeys(c.id for c in rivals[:3] if c.id != top.id)),
            # a chain that proves the cause, proposes no change and has no rival leaves
            # nothing to tell apart
            "tell_apart": None if id(top) in verified or (
                top.pinned and not top.fixes and all(c.id == top.id for c in ranked))
            else _tell_apart(ranked, failed),
        }
        if id(top) in verified and entry.generic:
            # a generic diagnosis names no cause: what a tried change did is evidence, not
            # the fix
            _, describe, shown = verified[id(top)]
            tried = fill(catalog.steps["tried-change"], {"detail": describe, "label": shown})
            update.update(chain=[*chain_text(top), tried])
        elif id(top) in verified:
            patch, describe, shown = verified[id(top)]
            update.update(fix=describe, fix_verified=True, fix_check=shown, patch=patch)
        elif try_fixes and top.fixes:
            # the concrete change was tried and did not work: it is evidence, never the fix
            attempts = [fill(catalog.steps["tried-hides"], {"detail": d, "label": why})
                        if why is not None else fill(catalog.steps["tried-failed"], {"detail": d})
                        for d, why in failed.get(id(top), [])[:1]]
            refuted = bool(attempts) and proposes_change(catalog.get(shown_diag.id),
                                                         shown_diag.fix)
            # sound general advice (a procedure, not a change in the learner's names) stays:
            # the chain says what was tried
            update.update(fix_verified=False, fix_failed=refuted,
                          chain=[*chain_text(top), *attempts])
            if attempts and shown_diag.id == top.id and (
                    result.error is None or top.root_line not in (None, shown_diag.line)):
                # its change was tried and did not work: a cause the title names elsewhere
                # than the failing line (or for a silent bug) is where the evidence points,
                # not a cause it settled; what the message itself says stays a fact
                update["title"] = _possibly(shown_diag.title)
            if top.direction is not None and shown_diag.id == top.id:
                # what the evidence says to do, in words: no change was shown to work
                update["fix"] = top.direction
            elif refuted:
                # the catalog's advice is a concrete change like the one just refuted: what
                # the evidence supports is where to look, not that change
                fail_line = shown_diag.line or top.root_line or 0
                root = top.root_line or fail_line
                key = "fix-refuted" if root < fail_line else "fix-refuted-here"
                update["fix"] = fill(catalog.steps[key], {"line": root, "fail_line": fail_line})
    diag = shown_diag.model_copy(update=update)
    # a warning or pitfall the evidence's finding covers (catalog ``covered_by``) is not
    # said again after it
    covered = {e.id for e in catalog.entries if diag.id in e.covered_by}
    rest = [d for d in base if d is not first and d.id != diag.id and d.id not in covered]
    if result.error is None:
        # a silent bug: the evidence's finding first, then what the static rules found
        rest = [d for d in rest if d.line != diag.root_line or d.id != diag.id]
    named = next((d for d in rest if d.severity == "warning" and d.line == diag.root_line),
                 None) if entry.generic and shown_diag.id == top.id and id(
                     top) not in verified else None
    if named is not None:
        # the evidence only located a symptom (where a nan starts); torch's own warning on
        # that line, as the catalog reads it, names the cause: it leads, with the chain
        rest = [d for d in rest if d is not named]
        diag = named.model_copy(update={"root_line": named.line, "chain": diag.chain})
    return [diag, *rest]
