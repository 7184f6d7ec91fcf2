from pathlib import Path

import pytest
from alone import pytest_runtest_protocol  # noqa: F401  (the hook that runs tests marked ``alone`` alone)

from engine import Simulation
from engine.host.acl_codes import ACL_MEM_MALLOC_HUGE_FIRST

DATA = Path(__file__).parent / "data"
ROUND = DATA / "round.toml"
MIB = 1 << 20


@pytest.fixture
def round_sim():
    """A simulation on the round-number profile, initialised, device set, numerics off."""
    sim = Simulation(ROUND, numerics=False, strict=True)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    return sim


def dev_alloc(sim, nbytes=MIB):
    ptr, ret = sim.acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    return ptr


def host_alloc(sim, nbytes=MIB):
    ptr, ret = sim.acl.rt.malloc_host(nbytes)
    assert ret == 0
    return ptr


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/* from fresh runs (tests/test_golden_traces.py); review the diff before committing",
    )


@pytest.fixture(autouse=True, scope="session")
def _own_cache_folder(tmp_path_factory):
    """What commands keep in the user's cache (``ascendsim lesson check``'s lesson references) goes to a folder of
    this test run, never to the home folder of whoever runs the tests."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield
