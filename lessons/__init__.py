"""AscendSim lessons: the curriculum (one folder per lesson), the selectors that point lesson steps into a
run, and the grader: a submission runs in an operating-system sandbox and records its program at the API
boundary; the grader judges only its own replay of that recording.

See :mod:`lessons.catalog` for a lesson folder's parts and :mod:`lessons.grader` for how grading works
and what it defends against.
"""
