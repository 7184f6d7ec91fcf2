"""The kernel's side of TilingData: the tiling argument, ``GET_TILING_DATA`` and ``TILING_KEY_IS``.

The host passes the raw tiling buffer a tiling function filled (:class:`~engine.host.tiling_data.RawTilingData`)
as one of ``launch_kernel``'s arguments. The launch keeps what it holds, read back from its bytes (the struct
and the tiling key), and the kernel's code gets a :class:`TilingAddress` in its place: Ascend C's
``GM_ADDR tiling``, the struct's place in GM. Two calls read it:

* :func:`get_tiling_data` (``GET_TILING_DATA(tilingData, tiling)``): the struct, copied from GM to the
  core's stack by the scalar unit. The copy is an instruction on the SCALAR pipe; what it costs is the
  simulator's assumption (one GM round trip, the profile's ``compute.gm_hbm_latency_cycles``, plus one cycle
  per 8-byte load): CANN's best-practice page says only that the copy takes microseconds-order time.
  How the bytes reach GM with the launch (the runtime copies the kernel's arguments) is part of the
  launch's own overhead here, not a copy of its own.
* :func:`tiling_key_is` (``TILING_KEY_IS(k)``): is ``k`` the key the host set? In Ascend C each key is a
  variant compiled into the kernel's binary, chosen at launch; a kernel declares its variants here with
  ``@asc.jit(tiling_keys=(1, 2))`` and a launch with another key is refused (:func:`bind_tiling`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..host.acl_codes import ACL_ERROR_INVALID_PARAM, AclError
from ..host.tiling_data import MAX_TILING_KEY, RawTilingData, TilingData, TilingDataError
from ..trace import Kind
from .operands import fail
from .pipes import Pipe
from .program import LOCAL
from .running import current

LOAD_BYTES = 8  # one scalar load (ASSUMPTION: a 64-bit register per load)


@dataclass(frozen=True)
class TilingAddress:
    """``GM_ADDR tiling``: where the launch's tiling data sits in GM, as the kernel receives it."""

    nbytes: int


def bind_tiling(kernel_name: str, keys: tuple[int, ...], args: tuple) -> tuple[tuple, TilingData | None, int]:
    """A launch's arguments with its raw tiling buffer (at most one) replaced by a :class:`TilingAddress`; the
    struct the buffer holds (read back from its bytes) and its tiling key. AclError for a second buffer, an
    empty one, or a key the kernel has no variant for."""
    found = [i for i, a in enumerate(args) if isinstance(a, RawTilingData)]
    if not found:
        return args, None, 0
    if len(found) > 1:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"launch_kernel: {kernel_name} takes one tiling buffer, got {len(found)} (arguments {found})",
            f"launch_kernel: {kernel_name} 只接受一个 RawTilingData，实际有 {len(found)} 个（参数 {found}）",
        )
    raw = args[found[0]]
    struct = raw.struct()
    if struct is None:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"launch_kernel: argument {found[0]} is an empty tiling buffer: call tiling.save_to_buffer(it) first",
            f"launch_kernel: 第 {found[0]} 个参数是空的 RawTilingData：请先调用 tiling.save_to_buffer(...)",
        )
    key = raw.tiling_key
    allowed = keys or (0,)
    if key not in allowed:
        shown = ", ".join(map(str, allowed))
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"launch_kernel: tiling_key must be one of {kernel_name}'s tiling keys ({shown}), got {key}",
            f"launch_kernel: tiling_key 必须是 {kernel_name} 的 tiling_keys 之一（{shown}），实际为 {key}",
        )
    out = list(args)
    out[found[0]] = TilingAddress(raw.get_data_size())
    return tuple(out), struct, key


def check_keys(keys) -> tuple[int, ...]:
    """``@asc.jit(tiling_keys=...)``: distinct integers 0..2^64-1, or TilingDataError."""
    if not isinstance(keys, tuple | list) or not keys or len(keys) > 64:
        raise TilingDataError("tiling_keys", "is a tuple of 1 to 64 integers", keys, "是 1 到 64 个整数组成的元组")
    for k in keys:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_TILING_KEY:
            raise TilingDataError(
                "tiling_keys", f"holds integers 0..{MAX_TILING_KEY}", k, f"只能包含 0..{MAX_TILING_KEY} 的整数"
            )
    if len(set(keys)) != len(keys):
        raise TilingDataError("tiling_keys", "holds each key once", keys, "每个 key 只能出现一次")
    return tuple(keys)


def get_tiling_data(tiling: TilingAddress) -> TilingData:
    """``GET_TILING_DATA(tilingData, tiling)``: the launch's TilingData, copied from GM to the stack."""
    ctx = current()
    launch = ctx.launch
    struct = getattr(launch, "tiling", None)
    if not isinstance(tiling, TilingAddress) or struct is None:
        fail(
            f"get_tiling_data: takes the kernel's tiling argument (the launch's raw tiling buffer), got {tiling!r}",
            f"get_tiling_data: 需要核函数的 TilingAddress 参数（下发时传入的 RawTilingData），实际为 {tiling!r}",
        )
    nbytes = tiling.nbytes
    cycles = launch.sim.profile.compute.gm_hbm_latency_cycles + -(-nbytes // LOAD_BYTES)
    ctx.emit(Pipe.S, LOCAL, launch.ps(cycles), 0.0, -1, 0, f"get_tiling_data {nbytes} B", Kind.COMPUTE)
    return struct.copy()


def tiling_key_is(key: int) -> bool:
    """``TILING_KEY_IS(key)``: does this launch run the variant of ``key``? (It costs nothing: on hardware each
    variant is compiled apart.) A key the kernel did not declare is an error."""
    ctx = current()
    launch = ctx.launch
    declared = launch.jit.tiling_keys or (0,)
    if key not in declared:
        shown = ", ".join(map(str, declared))
        fail(
            f"tiling_key_is: key must be one of {launch.name}'s tiling keys ({shown}), got {key!r}",
            f"tiling_key_is: 参数必须是 {launch.name} 的 tiling_keys 之一（{shown}），实际为 {key!r}",
        )
    return launch.tiling_key == key
