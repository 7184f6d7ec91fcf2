"""Before a run: estimate what it needs and refuse what cannot finish; during it: progress on stderr.

:func:`check_budget` compares a scenario's :class:`~engine.scenarios.cost.Cost` with this machine
and raises a one-line :class:`~app.cli.usage.UsageFailure` naming the flags, the limit and the value when

* the host memory it needs (numpy arrays plus about ``EVENT_BYTES`` per trace event) is more than
  the memory available now (``MemAvailable`` of ``/proc/meminfo``);
* its trace would hold more events than a trace can address (``MAX_TRACE_ROWS``: row ids are 32-bit);
* it would run longer than ``MAX_RUN_S`` at the simulator's rates (``EVENTS_PER_S``,
  ``NUMPY_FLOPS_PER_S``).

A run that fits but takes more than a couple of seconds shows its progress (events, rate, ETA) on
stderr through :class:`Progress`; the engine only calls a counter (it never prints), and Ctrl-C
stops the run with a one-line partial summary.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from typing import TextIO

from engine.scenarios import flag_of
from engine.scenarios.cost import EVENT_BYTES, Cost

from .usage import UsageFailure

MAX_TRACE_ROWS = 2**31 - 1  # the trace's cause column addresses rows with 32-bit ids
MAX_RUN_S = 3600.0  # a teaching tool's run should finish within the hour; a larger one is a mistyped size
EVENTS_PER_S = 1.0e6  # conservative: `ascendsim bench` measures 1.1-1.2 M/s (host calls), 1.6-2 M/s (big matmuls)
NUMPY_FLOPS_PER_S = 5.0e10  # ASSUMPTION: numpy's fp32 matmul on a small machine (measured 2.6e11 on 2 cores)
JSON_EVENT_BYTES = 600  # host memory per event of a Chrome trace document while it is written (measured ~500)
JSON_EVENTS_PER_S = 2.0e5  # Chrome trace events built and written per second (measured 1.67 M in ~25 s)
RERUNS = 2  # --report re-runs the scenario (timing only) for about this many recommendations
PROGRESS_AFTER_S = 2.0


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation now, or None when the system does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _size(nbytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes:.0f} B"


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 60:
        return f"{seconds / 60:.1f} minutes"
    return f"{seconds:.0f} s"


def _given(names: tuple[str, ...], values: dict) -> str:
    """``--m 10000000 --n 1024`` for the parameters ``("m", "n")`` and the run's values."""
    return " ".join(f"{flag_of(name)} {values[name]}" for name in names if name in values)


def run_seconds(cost: Cost, events: int) -> float:
    return events / EVENTS_PER_S + cost.flops / NUMPY_FLOPS_PER_S


def plan(cost: Cost, *, report: bool = False, trace_events: int = 0) -> tuple[int, int, float]:
    """(events simulated, host bytes, seconds) of a command: the run, re-runs for --report, a trace file."""
    events = cost.events * (1 + (RERUNS if report else 0))
    memory = cost.memory_bytes + trace_events * JSON_EVENT_BYTES
    return events, memory, run_seconds(cost, events) + trace_events / JSON_EVENTS_PER_S


def chrome_events(events: int, detail_cores: int | None, threshold: int) -> int:
    """About how many events a Chrome trace keeps: all up to ``threshold`` (or with every core detailed),
    else the lanes of ``detail_cores`` of the (typically 24 to 48) cores; measured 1.67 M of 14.3 M for 2."""
    if detail_cores is None:
        return events if events <= threshold else max(threshold, events // 8)
    return min(events, max(threshold, events * max(1, detail_cores) // 16))


def check_budget(
    cost: Cost, values: dict, *, report: bool = False, trace_events: int = 0, label: str = ""
) -> tuple[int, float]:
    """Refuse a run this machine cannot finish; return the events it will simulate (re-runs included) and its
    estimated wall seconds (:func:`plan`)."""
    events, memory, seconds = plan(cost, report=report, trace_events=trace_events)
    where = f"{label}: " if label else ""

    def refuse(field: str, what: str) -> None:
        names = cost.params.get(field, ())
        flags, given = "/".join(map(flag_of, names)), _given(names, values)
        head = f"{where}{flags}: " if flags else where
        raise UsageFailure(f"{head}{what}" + (f" (got {given})" if given else ""))

    if cost.events > MAX_TRACE_ROWS:
        refuse("events", f"about {cost.events:,} trace events, more than the {MAX_TRACE_ROWS:,} a trace can hold")
    free = available_memory()
    if free is not None and memory > free:
        hint = "; --no-numerics needs less" if cost.host_bytes > cost.events * EVENT_BYTES else ""
        refuse(
            "host_bytes",
            f"the run needs about {_size(memory)} of host memory, more than the {_size(free)} "
            f"available on this machine{hint}",
        )
    if seconds > MAX_RUN_S:
        field = "flops" if cost.flops / NUMPY_FLOPS_PER_S > events / EVENTS_PER_S else "events"
        hint = "; --no-numerics skips the arithmetic" if field == "flops" else ""
        refuse(
            field, f"the run would take about {_duration(seconds)}, more than the limit of {_duration(MAX_RUN_S)}{hint}"
        )
    return events, seconds


class Interrupted(Exception):
    """Ctrl-C stopped a run; the message is its partial summary."""


class Progress:
    """A long run's progress on stderr, drawn by a background thread twice a second.

    The engine calls the instance with the trace rows of its current simulation (a re-run for
    --report starts a new count, which is added on). Nothing is drawn for runs shorter than
    ``after_s``; on a terminal one line is redrawn in place, otherwise a line is printed every 10 s.
    """

    def __init__(
        self,
        total_events: int,
        label: str,
        estimate_s: float = 0.0,
        stream: TextIO | None = None,
        after_s: float = PROGRESS_AFTER_S,
    ):
        self.total = max(1, total_events)
        self.label = label
        self.estimate_s = estimate_s
        self.stream = stream if stream is not None else sys.stderr
        self.after_s = after_s
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.stage = ""  # what runs after the simulation ("analysing", "writing FILE"), shown instead of counts
        self.base = 0
        self.last = 0
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def __call__(self, rows: int) -> None:
        if rows < self.last:  # a new simulation (a re-run): keep counting from where the last one ended
            self.base += self.last
        self.last = rows

    @property
    def done(self) -> int:
        return self.base + self.last

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        done = self.done
        if self.stage:
            return f"{self.label}: {self.stage}, {elapsed:.0f} s"
        if not done:  # nothing recorded yet (numerics, or the first blocks being recorded)
            left = max(0.0, self.estimate_s - elapsed)
            eta = f", about {_duration(left)} left by the estimate" if left else ""
            return f"{self.label}: running for {elapsed:.0f} s{eta}"
        if done >= self.total:  # the estimate is reached: the trace is being sorted and summarised
            return f"{self.label}: {done:,} events simulated, finishing, {elapsed:.0f} s"
        rate = done / elapsed
        share = min(99, math.floor(100 * done / self.total))
        if done < self.total / 20:  # too early for the rate to mean much (blocks are still being recorded)
            left = max(0.0, self.estimate_s - elapsed) or None
        else:
            left = (self.total - done) / rate if done < self.total else None
        eta = f", about {_duration(left)} left" if left is not None else ""
        return (
            f"{self.label}: {done:,} of about {self.total:,} events ({share} %), {rate / 1e6:.2f} M events/s, "
            f"{elapsed:.0f} s{eta}"
        )

    def summary(self) -> str:
        elapsed = time.perf_counter() - self.start
        share = min(100, math.floor(100 * self.done / self.total))
        where = f" while {self.stage}" if self.stage else ""
        return (
            f"{self.label} stopped after {elapsed:.1f} s{where} with {self.done:,} of about {self.total:,} events "
            f"simulated ({share} %); nothing was written"
        )

    def _draw(self) -> None:
        next_line = self.after_s
        while not self._stop.wait(0.5):
            elapsed = time.perf_counter() - self.start
            if elapsed < self.after_s:
                continue
            if self.tty:
                self.stream.write("\r" + self.line() + "\x1b[K")
                self.stream.flush()
                self._drawn = True
            elif elapsed >= next_line:
                self.stream.write(self.line() + "\n")
                self.stream.flush()
                next_line = elapsed + 10

    def __enter__(self) -> Progress:
        self.start = time.perf_counter()
        self._thread = threading.Thread(target=self._draw, name="ascendsim-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        if exc_type is KeyboardInterrupt:
            raise Interrupted(self.summary()) from None
        return False
