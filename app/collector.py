"""Python's cyclic garbage collector in the processes that run simulations.

A run allocates hundreds of thousands of small containers that live until it ends (the kernel scheduler's heap
entries, the steady-state memo's entries, instruction tuples, detail records). With CPython's default thresholds
(a young collection every 700 net allocations) the collector walks them again and again and finds nothing: an
8192^3 timing-only command made 503 young, 45 middle and 4 full collections, 0.17-0.21 s of its 2.1-2.3 s, and
none of them collected an object. With a young collection every 10,000 allocations (a middle one every 10 young,
a full one every 10 middle, which CPython further holds back until the long-lived objects grew by a quarter) the
same command spends 0.04-0.05 s collecting. Cycles are still collected, a little later.

A process that plays a run it has just simulated frees the simulation first (:func:`after_run`). A process that
forks jobs freezes what it holds first (:func:`before_forking_jobs`): its jobs' collections then
neither walk nor touch (so never copy, page by page) the server's objects they inherit: what ``gc.freeze`` is for.
"""

from __future__ import annotations

import gc

RUN_THRESHOLDS = (10_000, 10, 10)  # young, middle, full (CPython's defaults: 700, 10, 10)


def for_runs() -> None:
    """Collect as :data:`RUN_THRESHOLDS` says in this process (and in the processes it forks from now on)."""
    gc.set_threshold(*RUN_THRESHOLDS)


def after_run() -> None:
    """Free a finished run's simulation now, before its replay is built on top: the simulation is a graph of
    reference cycles (the runtime, its streams, the kernel launches), so only a full collection frees it, and at
    :data:`RUN_THRESHOLDS` one may not come for a long time. Measured: its web job's peak memory fell from
    720-752 to 615-662 MB, the same total time (its views, prepared next, reuse the memory). Each kernel's
    scheduling state (its blocks' programs, the steady-state memo), most of those objects, is freed as the kernel
    ends (``KernelScheduler.let_go``): what is left after an 8192^3 run is 8 k objects, collected in 0.013 s
    (229 k in 0.09 s when the collector had to find the scheduling state too); after a 2048^3 run, 0.007 s."""
    gc.collect()


def before_forking_jobs() -> None:
    """In a process about to fork jobs: collect for runs (its jobs inherit the thresholds) and move every object it
    holds now out of the collector's reach."""
    for_runs()
    gc.collect()
    gc.freeze()
