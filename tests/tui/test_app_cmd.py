"""``tutor`` (no subcommand) start-up pieces that need no screen."""

from __future__ import annotations

from pathlib import Path

from tutor.cli.app_cmd import LazyTutor
from tutor.course import load_course

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_lazy_tutor_builds_on_first_question(monkeypatch) -> None:
    built: list[object] = []

    class Recorder:
        @classmethod
        def from_environment(cls, course):
            built.append(course)
            return cls()

        def ask(self, question, **kwargs):
            return f"answer to {question}"

    import tutor.chat

    monkeypatch.setattr(tutor.chat, "Tutor", Recorder)
    course = load_course(MINI)
    lazy = LazyTutor(course)
    assert built == []
    assert lazy.ask("why", lang="en") == "answer to why"
    assert lazy.ask("again", lang="en") == "answer to again"
    assert built == [course]
