"""A multi-stream task helper in the spirit of the seed's ``AdvancedStreamManager`` (section 5.1).

``submit_task(fn, dependencies)`` picks the stream with the least queued work, makes it wait for
the events of the tasks it depends on (``stream_wait_event``), lets ``fn(stream)`` enqueue the work,
and records an event after it: the returned :class:`TaskHandle` is what later tasks depend on.
``pipeline_data_prefetch`` keeps ``prefetch_depth`` batches of copies ahead of compute.

Unlike the seed (which ran tasks on detached host threads), everything here is ordinary pyACL
calls on one host thread: the asynchrony is the device's, as in real ACL code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .acl_codes import ACL_SUCCESS, AclError

if TYPE_CHECKING:
    from .simulation import Simulation


@dataclass(frozen=True)
class TaskHandle:
    event: int  # the event recorded after the task
    stream: int  # the stream it ran on
    index: int  # submission number


class StreamManager:
    def __init__(self, sim: Simulation, num_streams: int, priority: int = 0) -> None:
        if num_streams < 1:
            raise ValueError(f"num_streams must be >= 1, got {num_streams}")
        self._sim = sim
        self._acl = sim.acl
        self.streams: list[int] = []
        for _ in range(num_streams):
            stream, ret = self._acl.rt.create_stream_with_config(priority, 0)
            self._check(ret, "create_stream_with_config")
            self.streams.append(stream)
        self.handles: list[TaskHandle] = []
        self._events: list[int] = []

    def _check(self, ret: int, what: str) -> None:
        if ret != ACL_SUCCESS:
            raise AclError(ret, f"StreamManager: {what} failed")

    def _pending(self, stream: int) -> int:
        """Tasks still queued on ``stream`` at the current host time."""
        sim = self._sim
        sim.runtime.clock.run_until_time(sim.host_now)
        return sim.stream(stream, "StreamManager").pending()

    def select_idle_stream(self) -> int:
        """The stream with the fewest queued tasks (lowest index on ties)."""
        return min(self.streams, key=lambda s: (self._pending(s), self.streams.index(s)))

    def submit_task(self, fn: Callable[[int], Any], dependencies: Sequence[TaskHandle] = ()) -> TaskHandle:
        stream = self.select_idle_stream()
        for dep in dependencies:
            if dep.stream != stream:  # same-stream order is already guaranteed by FIFO
                self._check(self._acl.rt.stream_wait_event(stream, dep.event), "stream_wait_event")
        fn(stream)
        event, ret = self._acl.rt.create_event()
        self._check(ret, "create_event")
        self._check(self._acl.rt.record_event(event, stream), "record_event")
        self._events.append(event)
        handle = TaskHandle(event, stream, len(self.handles))
        self.handles.append(handle)
        return handle

    def pipeline_data_prefetch(
        self,
        batches: Sequence[Any],
        prefetch: Callable[[Any, int, int], Any],
        compute: Callable[[Any, int, int], Any],
        prefetch_depth: int = 2,
    ) -> list[TaskHandle]:
        """Copy batch i while computing batch i - prefetch_depth; compute waits for its own copy."""
        if prefetch_depth < 1:
            raise ValueError(f"prefetch_depth must be >= 1, got {prefetch_depth}")
        loaded: dict[int, TaskHandle] = {}
        computed: list[TaskHandle] = []
        for i in range(len(batches) + prefetch_depth):
            if i < len(batches):
                loaded[i] = self.submit_task(lambda s, i=i: prefetch(batches[i], i, s))
            if i >= prefetch_depth:
                c = i - prefetch_depth
                computed.append(self.submit_task(lambda s, c=c: compute(batches[c], c, s), [loaded[c]]))
        return computed

    def synchronize(self) -> None:
        for stream in self.streams:
            self._check(self._acl.rt.synchronize_stream(stream), "synchronize_stream")

    def destroy(self) -> None:
        self.synchronize()
        for event in self._events:
            self._check(self._acl.rt.destroy_event(event), "destroy_event")
        for stream in self.streams:
            self._check(self._acl.rt.destroy_stream(stream), "destroy_stream")
        self._events.clear()
        self.streams.clear()
