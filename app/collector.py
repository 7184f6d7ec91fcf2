"""Python's cyclic garbage collector in the processes that run simulations.

A run allocates hundreds of thousands of small containers that live until it ends (the kernel scheduler's heap
entries, the steady-state memo's entries, instruction tuples, detail records). With CPython's default thresholds
(a young collection every 700 net allocations) the collector walks them again and again and finds nothing: an
8192^3 timing-only command made 503 young, 45 middle and 4 full collections, 0.17-0.21 s of its 2.1-2.3 s, and
none of them collected an object. With a young collection every 10,000 allocations (a middle one every 100 young,
a full one every 10 middle, which CPython further holds back until the long-lived objects grew by a quarter) the
same command makes 77 young and no middle collection during the run, 0.02 s of collecting. (A middle collection
every 10 young made 7 during the run, 5 ms each: 0.03 s more.) Cycles are still collected, a little later.

A process that plays a run it has just simulated frees the simulation first (:func:`after_run`). A process that
forks jobs freezes what it holds first (:func:`before_forking_jobs`): its jobs' collections then
neither walk nor touch (so never copy, page by page) the server's objects they inherit: what ``gc.freeze`` is for.
"""

from __future__ import annotations

import ctypes
import gc

RUN_THRESHOLDS = (10_000, 100, 10)  # young, middle, full (CPython's defaults: 700, 10, 10)


def for_runs() -> None:
    """Collect as :data:`RUN_THRESHOLDS` says in this process (and in the processes it forks from now on)."""
    gc.set_threshold(*RUN_THRESHOLDS)


def after_run() -> None:
    """Free a finished run's simulation now, before its replay is built on top, and give the memory it freed back
    to the system.

    * The simulation is a graph of reference cycles (the runtime, its streams, the kernel launches), so only a full
      collection frees it, and at :data:`RUN_THRESHOLDS` one may not come for a long time. Measured: its web job's
      peak memory fell from 720-752 to 615-662 MB, the same total time (its views, prepared next, reuse the
      memory). Each kernel's scheduling state (its blocks' programs, the steady-state memo), most of those objects,
      is freed as the kernel ends (``KernelScheduler.let_go``): what is left after an 8192^3 run is 8 k objects,
      collected in 0.013 s (229 k in 0.09 s when the collector had to find the scheduling state too).
    * The C allocator keeps what a run freed in its heap, scattered between what lives on (the trace), and a replay
      reuses only part of it: :func:`give_back` returns it. After a 2048^3 timing-only run the process's memory
      falls from 45 to 40 MB, and the peak of the run and its replay from 12.0-13.1 MB over the process before it
      to 11.5 MB (what the trace's freeze needs); after 8192^3, about 170 MB are given back in 0.012 s, the peak
      falls from 484 to 446 MB, and the replay takes 0.06 s longer (it touches fresh pages)."""
    gc.collect()
    give_back()


def give_back() -> None:
    """Return the free memory of the C allocator's heap to the system (glibc's ``malloc_trim``; where the C library
    has none, nothing)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # no such function; no C library to open (Windows: TypeError)
        return
    trim(0)


def before_forking_jobs() -> None:
    """In a process about to fork jobs: collect for runs (its jobs inherit the thresholds) and move every object it
    holds now out of the collector's reach."""
    for_runs()
    gc.collect()
    gc.freeze()
