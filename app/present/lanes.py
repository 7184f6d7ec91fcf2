"""A timeline lane's name in the UI's language, made from the lane's typed fields (its kind, unit, direction,
core and pipe), never from the English label the engine gave it: "Device 0 streams/stream 1" in English is
"设备 0 的流/流 1" in Chinese. The English names equal the engine's labels (tested), so both come from here."""

from __future__ import annotations

from engine.aicore.pipes import LANE_NAMES
from engine.trace.locations import CoreRef
from engine.trace.schema import Lane, LaneKind

from .messages import t as msg

DEVICE = 0  # the one device simulated (engine/host/acl.py: set_device accepts device 0 only)


def stream_name(unit: int, lang: str) -> str:
    """A stream's name: stream 0 is the default stream."""
    return msg("lane.thread.default_stream", lang) if unit == 0 else msg("lane.thread.STREAM", lang, unit=unit)


def engine_name(direction: str, unit: int, lang: str) -> str:
    """A copy engine's name ("H2D engine 0")."""
    return msg("lane.thread.COPY_ENGINE", lang, direction=direction, unit=unit)


def lane_group(lane: Lane, lang: str) -> str:
    """What the lane belongs to: the host, the device's streams, engines or cores, or one core ("AIV 3")."""
    kind = LaneKind(lane.kind)
    if kind in (LaneKind.PIPE, LaneKind.BLOCK):
        return CoreRef(lane.core_type, lane.core).label
    if kind is LaneKind.OTHER:
        return lane.process
    return msg(f"lane.group.{kind.name}", lang, device=DEVICE)


def lane_thread(lane: Lane, lang: str) -> str:
    """The lane itself within its group: the host thread, a stream, an engine, a pipe ("MTE2"), the blocks."""
    kind = LaneKind(lane.kind)
    if kind is LaneKind.STREAM:
        return stream_name(lane.unit, lang)
    if kind is LaneKind.COPY_ENGINE:
        return engine_name(lane.direction, lane.unit, lang)
    if kind is LaneKind.PIPE:
        return LANE_NAMES[lane.pipe]  # the hardware's pipe names, the same in every language
    if kind is LaneKind.OTHER:
        return lane.thread
    return msg(f"lane.thread.{kind.name}", lang)


def lane_name(lane: Lane, lang: str) -> str:
    """The lane's whole name, group/thread ("Host/host thread", "主机/主机线程")."""
    return f"{lane_group(lane, lang)}/{lane_thread(lane, lang)}"


__all__ = ("DEVICE", "engine_name", "lane_group", "lane_name", "lane_thread", "stream_name")
