"""Lessons: the pydantic lesson format and loading YAML with positions for error messages.

Knows nothing of torch. Public API::

    from tutor.course import load_course, load_lesson, bundled_lessons_dir, LessonError

    course = load_course()                # the bundled course (or load_course(Path("dir")))
    lesson = load_lesson(Path("lessons/01-requires-grad.yaml"))
"""

from tutor.course.loader import (
    LessonError,
    LoadedLesson,
    Position,
    Problem,
    lesson_files,
    load_course,
    load_lesson,
    load_lesson_with_positions,
)
from tutor.course.models import (
    AnswerStep,
    AstCheck,
    AttributeCheck,
    Check,
    Choice,
    CodeStep,
    Course,
    ErrorCheck,
    FixStep,
    FunctionCheck,
    GradedStep,
    Lesson,
    NoErrorCheck,
    QuizStep,
    ReadingStep,
    RunnableStep,
    StdoutCheck,
    Step,
    ValueCheck,
)
from tutor.paths import bundled_lessons_dir

__all__ = [
    "AnswerStep",
    "AstCheck",
    "AttributeCheck",
    "Check",
    "Choice",
    "CodeStep",
    "Course",
    "ErrorCheck",
    "FixStep",
    "FunctionCheck",
    "GradedStep",
    "Lesson",
    "LessonError",
    "LoadedLesson",
    "NoErrorCheck",
    "Position",
    "Problem",
    "QuizStep",
    "ReadingStep",
    "RunnableStep",
    "StdoutCheck",
    "Step",
    "ValueCheck",
    "bundled_lessons_dir",
    "lesson_files",
    "load_course",
    "load_lesson",
    "load_lesson_with_positions",
]
