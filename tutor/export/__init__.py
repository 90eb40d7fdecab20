"""Grading results for the platforms courses already use.

- :mod:`tutor.export.platforms`: the results formats of Gradescope and PrairieLearn, as
  models, built from graded entries.
- :mod:`tutor.export.autograder`: what runs inside their containers (``python -m
  tutor.export.autograder gradescope|prairielearn``): grade the submission, write results.
- :mod:`tutor.export.bundle`: the zip a teacher uploads (scripts, config, the tutor's source).
- :mod:`tutor.export.feedback`: a Markdown feedback file per student from a grading report.
- :mod:`tutor.export.canvas`: a gradebook CSV that Canvas imports.
"""
