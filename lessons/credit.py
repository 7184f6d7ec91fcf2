"""Which outputs the device produced: a replay's device-to-host copies, the bytes each brought back, and whether
a kernel wrote them last (no copy from the host since, by the tasks' vector clocks). An output whose bytes no
such copy brought back is not credited to the device (:class:`NotFromDevice`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.device.stream import TaskKind
from engine.simulation import RunResult

HOST_WROTE = "it came back from device memory the host wrote, not a kernel"
NOT_COPIED = "no device-to-host copy brought these values back"
NOT_FROM_DEVICE_ZH = {
    HOST_WROTE: "它取自主机写入的设备内存，而不是核函数写出的",
    NOT_COPIED: "没有任何设备到主机的拷贝带回这些值",
    "not an array": "不是数组",
}


@dataclass(frozen=True, eq=False)
class NotFromDevice:
    """An output the replay cannot credit to the device, why, and the values the child claimed (a check may
    say they would have been right: the verdict is then NOT_ON_DEVICE)."""

    reason: str
    claimed: object = None


@dataclass(frozen=True)
class Payload:
    seq: int
    alloc: tuple  # host allocation (where, ident)
    offset: int
    data: bytes


def from_kernel(run: RunResult, seq: int) -> bool:
    """Was the memory device-to-host copy ``seq`` read last written by a kernel (no copy wrote it since)?"""
    records = {r.seq: r for r in run.tasks}
    copy = records.get(seq)
    if copy is None or not copy.reads:
        return False
    alloc, lo, hi = copy.reads[0]

    def before(w) -> bool:
        return w.end >= 0 and w.seq != seq and w.clock(w.stream) <= copy.clock(w.stream)

    writers = [w for w in run.tasks if before(w) and any(a == alloc and wl < hi and lo < wh for a, wl, wh in w.writes)]
    kernels = [w for w in writers if w.kind == TaskKind.KERNEL]
    others = [w for w in writers if w.kind != TaskKind.KERNEL]
    return any(not any(k.clock(k.stream) <= o.clock(k.stream) for o in others) for k in kernels)


class Credit:
    """Which bytes the replay's device-to-host copies brought back, and whether a kernel had written them."""

    def __init__(self, credited: list[tuple[int, Payload, bool]]) -> None:
        self.whole: dict[bytes, bool] = {}
        self.images: dict[tuple, tuple[bytearray, np.ndarray]] = {}
        self.starts: dict[tuple, set[int]] = {}
        for sim, p, ok in credited:
            self.whole[p.data] = self.whole.get(p.data, False) or ok
            key = (sim, p.alloc)
            end = p.offset + len(p.data)
            image, mark = self.images.get(key, (bytearray(), np.zeros(0, np.int8)))
            if len(image) < end:
                image.extend(bytes(end - len(image)))
                mark = np.concatenate([mark, np.zeros(end - len(mark), np.int8)])
            image[p.offset : end] = p.data
            mark[p.offset : end] = 1 if ok else 2
            self.images[key] = (image, mark)
            self.starts.setdefault(key, set()).add(p.offset)

    def verify(self, value):
        if value is None:
            return None
        if isinstance(value, list | tuple):
            return [self.verify(v) for v in value]
        if not isinstance(value, np.ndarray):
            return NotFromDevice("not an array")
        data = np.ascontiguousarray(value).tobytes()
        if self.whole.get(data):
            return value
        seen = data in self.whole
        for key, (image, mark) in self.images.items():
            for off in self.starts[key]:
                end = off + len(data)
                if end <= len(image) and image[off:end] == data:
                    if (mark[off:end] == 1).all():
                        return value
                    seen = True
        return NotFromDevice(HOST_WROTE if seen else NOT_COPIED, value)


__all__ = ("HOST_WROTE", "NOT_COPIED", "NOT_FROM_DEVICE_ZH", "Credit", "NotFromDevice", "Payload", "from_kernel")
