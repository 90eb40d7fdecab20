"""How the own-editor commands print an exercise, an attempt and a hint (rich, bilingual).

``tutor watch`` prints the whole attempt after every save; ``tutor verify`` prints only why
each failing exercise fails. Both read the same :class:`~tutor.learning.Attempt`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.cli.diagnosis_view import where_text
from tutor.cli.messages import msg

if TYPE_CHECKING:
    from rich.console import Console

    from tutor.diagnosis.models import Diagnosis
    from tutor.grading.models import CheckResult, Verdict
    from tutor.i18n import Lang, Text
    from tutor.learning import Attempt, HintShown

OUTPUT_LINES = 20
"""Lines of the learner's own output shown after a run; the rest is counted."""

class AttemptView:
    """Prints attempts and hints to ``console`` in ``lang``; no markup is read from data."""

    def __init__(self, console: Console, lang: Lang) -> None:
        self.console = console
        self.lang: Lang = lang

    def t(self, text: Text, /, **values: object) -> str:
        return (text.format(**values) if values else text).get(self.lang)

    def say(self, text: Text, /, *, style: str | None = None, **values: object) -> None:
        self.console.print(self.t(text, **values), style=style, markup=False, highlight=False)

    def line(self, text: str, *, style: str | None = None) -> None:
        self.console.print(text, style=style, markup=False, highlight=False)

    def labelled(self, label: Text | str, text: Text | str) -> str:
        """``label: text``, with the colon of the view's language (``修改建议：...``)."""
        return self.t(msg("labelled", label=label, text=text))

    # ------------------------------------------------------------------ attempts

    def status_line(self, verdict: Verdict) -> str:
        status = self.t(msg(f"attempt.status.{verdict.status}"))
        score = self.t(msg("attempt.score", score=verdict.score, max=verdict.max_score))
        return f"{status}  {score}"

    def attempt(self, attempt: Attempt) -> None:
        """Everything: verdict, every check, the learner's output, the diagnoses."""
        verdict = attempt.verdict
        style = {"pass": "bold green", "fail": "bold yellow"}.get(verdict.status, "bold red")
        self.line(self.status_line(verdict), style=style)
        overall = verdict.message.get(self.lang) if verdict.message is not None else None
        if overall is not None:
            self.line(overall)
        self._did_you_mean(verdict, indent="")
        for check in verdict.checks:
            self._check(check, overall)
        run = verdict.run
        if run is not None and run.stdout.strip():
            lines = run.stdout.rstrip("\n").splitlines()
            self.say(msg("attempt.output"), style="dim")
            for out_line in lines[:OUTPUT_LINES]:
                self.line(f"  {out_line}")
            if len(lines) > OUTPUT_LINES:
                self.say(msg("attempt.output_cut", n=len(lines) - OUTPUT_LINES), style="dim")
        self.diagnoses(attempt)

    def why(self, attempt: Attempt) -> None:
        """Why an exercise does not pass: the run's error, each failing check with its
        feedback (got/expected), and what the diagnosis proposes."""
        verdict = attempt.verdict
        overall = verdict.message.get(self.lang) if verdict.message is not None else None
        if overall is not None:
            self.line(f"  {overall}")
        error = verdict.run.error if verdict.run is not None else None
        if error is not None and (overall is None or error.message.strip() not in overall):
            values = {"type": error.type, "message": error.message.strip(), "line": error.line}
            text = msg("attempt.error_at" if error.line else "attempt.error", **values)
            self.line(f"  {self.t(text)}", style="red")
        self._did_you_mean(verdict, indent="  ")
        for check in verdict.checks:
            if check.status != "pass":
                self._check(check, overall)
        self.diagnoses(attempt, brief=True)

    def _did_you_mean(self, verdict: Verdict, *, indent: str) -> None:
        """"Did you mean backward()?" for a mistyped tensor method or name."""
        if verdict.run is None or verdict.run.outcome != "error":
            return
        from tutor.learning.did_you_mean import did_you_mean

        meant = did_you_mean(verdict.run.error)
        if meant is not None:
            self.line(f"{indent}{meant.get(self.lang)}", style="bold yellow")

    def _check(self, check: CheckResult, overall: str | None) -> None:
        mark, style = ("✓", None) if check.status == "pass" else ("✗", "red")
        message = check.message.get(self.lang)
        # when the run did not finish every check repeats the overall message: say it once
        label = check.label.get(self.lang)
        shown = self.labelled(label, message) if message != overall else label
        self.line(f"  {mark} {shown}", style=style)
        output = check.output_for(self.lang)
        if not output or check.status == "pass" or output in message:
            return
        if overall is not None and output in overall:
            return
        for out_line in output.splitlines():
            self.console.print(f"      {out_line}", style="dim", markup=False)

    def diagnoses(self, attempt: Attempt, *, brief: bool = False) -> None:
        for diagnosis in attempt.diagnoses:
            self._diagnosis(diagnosis, brief=brief)
        if attempt.diagnosis_error is not None:
            error = attempt.diagnosis_error.message_in(self.lang)
            self.say(msg("attempt.no_diagnosis", error=error), style="red")

    def _diagnosis(self, diagnosis: Diagnosis, *, brief: bool) -> None:
        where = where_text(diagnosis)
        indent = "  " if brief else ""
        title = self.labelled(msg("attempt.diagnosis"), diagnosis.title + where)
        self.line(f"{indent}{title}", style="bold magenta")
        if not brief:
            self.line(f"  {diagnosis.explanation.get(self.lang)}")
        self.line(f"{indent}  {self.labelled(msg('attempt.fix'), diagnosis.fix)}")

    def stale(self, refs: list[str]) -> None:
        """Files whose step the course no longer has as a code exercise (skipped)."""
        for ref in refs:
            self.say(msg("attempt.stale", ref=ref), style="yellow")

    # ------------------------------------------------------------------ hints

    def hint(self, shown: HintShown | None) -> None:
        if shown is None:
            self.say(msg("attempt.no_hints"), style="dim")
            return
        if shown.again:
            self.say(msg("attempt.all_hints"), style="dim")
        label = self.t(msg("attempt.hint", i=shown.number, n=shown.total))
        self.line(self.labelled(label, shown.text), style="cyan")
