"""Lesson 12 scenario: AddCustom on x and y of shape 8 x 2048 through its operator project's host side and the
two aclnn phases. Also the check's cases, the hidden cases' draws and the question's truth."""

from __future__ import annotations

import numpy as np

from engine import Simulation

ALIGN = 16  # fp16 elements per 32-byte data block
ALIGNED, PADDED = 1, 2
SYSTEM_WORKSPACE = 16 * 1024 * 1024  # PlatformAscendC.get_lib_api_work_space_size (the AddCustom sample's value)
KERNEL_CASES = (("main", (8, 2048)), ("odd", (3, 1001)))  # (run, shape): aligned and unaligned, on the 910B1
INFER_CASES = (  # (x shape, y shape): InferShape's answers are judged on these
    ((8, 2048), (8, 2048)),
    ((3, 5, 7), (3, 5, 7)),
    ((1000,), (1000,)),
    ((2, 3, 4, 5, 6), (2, 3, 4, 5, 6)),
    ((4, 4), (4, 5)),
    ((6,), (2, 3)),
)
FAILED = "GRAPH_FAILED"


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(10, 1 << 20))


def draw_shape(rng: np.random.Generator) -> dict:
    """Hidden: a 3-D or 4-D shape whose length fills whole data blocks (InferShape must give every dim)."""
    dims = [int(rng.integers(2, 9)) for _ in range(int(rng.integers(2, 4)))]
    return {"shape": [*dims, 16 * int(rng.integers(4, 40))], "seed": _seed(rng)}


def draw_unaligned(rng: np.random.Generator) -> dict:
    """Hidden: a 1-D length that is not a whole number of data blocks (the other tiling key)."""
    n = int(rng.integers(20, 300)) * 16 + int(rng.integers(1, 16))
    return {"shape": [n], "seed": _seed(rng)}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """Hidden: another chip, ascend310p3, whose vector core count differs."""
    return {
        "shape": [int(rng.integers(2, 6)), 16 * int(rng.integers(20, 200))],
        "seed": _seed(rng),
        "profile": "ascend310p3",
    }


def inputs(name: str, shape, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, name)) if seed is None else seed)
    x = rng.uniform(-2.0, 2.0, tuple(shape)).astype(np.float16)
    return x, rng.uniform(-2.0, 2.0, tuple(shape)).astype(np.float16)


def expected(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x + y


def expected_infer(x_shape, y_shape):
    return list(x_shape) if tuple(x_shape) == tuple(y_shape) else FAILED


def expected_tiling(total: int, cores: int) -> tuple[int, int]:
    """(block_dim, tiling key) of the reference tiling for ``total`` elements on ``cores`` vector cores."""
    blocks = max(1, -(-total // ALIGN))
    return min(cores, blocks), ALIGNED if total % ALIGN == 0 else PADDED


def scenario(sim: Simulation) -> dict:
    from . import solution

    x, y = inputs("main", KERNEL_CASES[0][1])
    z = solution.add_custom_host(sim, x, y)
    return {"correct": bool(np.array_equal(z, expected(x, y)))}


def scenario_inputs() -> dict:
    x, y = inputs("main", KERNEL_CASES[0][1])
    return {"x": x, "y": y}


def truth_blocks_for_200() -> str:
    """The block count the reference tiling launches for 200 elements on the 910B1."""
    from . import solution

    sim = Simulation(numerics=False)
    x = np.zeros(200, np.float16)
    solution.add_custom_host(sim, x, x)
    return str(sim.extra["aclnn"][0]["block_dim"])
