"""The Textual app: a thin face over :class:`tutor.learning.LearningSession`.

``TutorApp`` is in :mod:`tutor.tui.app`; this package file stays import-free so that
importing a pure helper (labels, render) never loads Textual.
"""
