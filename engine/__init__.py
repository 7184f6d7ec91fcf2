"""AscendSim engine: a deterministic simulator of Ascend host-device cooperation.

Imports numpy and the standard library only; never a UI. Start with :class:`Simulation`::

    from engine import Simulation
    sim = Simulation("ascend910b1")
    acl = sim.acl
    acl.init(); acl.rt.set_device(0)
    ...
    result = sim.finish()        # trace, findings, timings

The folders follow what they model:

* ``simulation.py`` owns one run's state (nothing lives in module globals), ``clock.py`` is its event core;
* ``host/`` — the ACL API a host program calls (pyACL's shape, real error codes) and its checks, and the
  TilingData a host tiling function fills (``TilingContext``, ``TilingData``, ``Field``: exported here);
* ``device/`` — streams, events, the task store, copy engines, the cores as granted to kernels, global
  memory, deadlock diagnosis;
* ``aicore/`` — inside one AI core: kernel code recording programs, pipes, buffers, the Cube and Vector
  arithmetic, the scheduler that times the programs; ``asc.py`` is the kernel-side API (pyasc's names);
* ``kernels/`` — the shipped kernels, written with ``asc`` as a trainee would;
* ``trace/`` — the record of a run (writer, reader, schema, typed details, locations, findings, codec);
* ``analysis/`` — what a finished trace means: metrics, gaps, roofline, rules, comparisons;
* ``scenarios/`` — named host programs with their parameters and cost estimates, and ``runner``;
* ``profiles/`` — the chips' numbers with their sources; ``tools/`` — ``bench`` and ``calibration``.
"""

from .host import acl_codes
from .host.acl_codes import AclError
from .host.tiling_data import Field, RawTilingData, StructField, TilingContext, TilingData, TilingDataError
from .profiles.profile import DEFAULT_PROFILE, Profile, ProfileError, list_profiles, load_profile
from .simulation import RunResult, Simulation
from .trace import Kind, TraceData
from .trace.findings import DeadlockError, Finding

__all__ = (
    "DEFAULT_PROFILE",
    "AclError",
    "DeadlockError",
    "Field",
    "Finding",
    "Kind",
    "Profile",
    "ProfileError",
    "RawTilingData",
    "RunResult",
    "Simulation",
    "StructField",
    "TilingContext",
    "TilingData",
    "TilingDataError",
    "TraceData",
    "acl_codes",
    "list_profiles",
    "load_profile",
)
