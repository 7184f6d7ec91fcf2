"""AscendSim lessons: the curriculum (one folder per lesson), the selectors that point lesson steps into a
run, and the grader that runs a submission in an isolated process and judges it from data.

See :mod:`lessons.catalog` for a lesson folder's parts and :mod:`lessons.grader` for how grading works
and what it defends against.
"""
