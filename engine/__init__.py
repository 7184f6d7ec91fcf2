"""AscendSim engine: a deterministic simulator of Ascend host-device cooperation.

Imports numpy and the standard library only; never a UI. Start with :class:`Simulation`::

    from engine import Simulation
    sim = Simulation("ascend910b1")
    acl = sim.acl
    acl.init(); acl.rt.set_device(0)
    ...
    result = sim.finish()        # trace, findings, timings
"""

from . import acl_codes
from .acl_codes import AclError
from .findings import DeadlockError, Finding
from .profile import DEFAULT_PROFILE, Profile, ProfileError, list_profiles, load_profile
from .simulation import RunResult, Simulation
from .trace import Kind, TraceData

__all__ = (
    "DEFAULT_PROFILE",
    "AclError",
    "DeadlockError",
    "Finding",
    "Kind",
    "Profile",
    "ProfileError",
    "RunResult",
    "Simulation",
    "TraceData",
    "acl_codes",
    "list_profiles",
    "load_profile",
)
