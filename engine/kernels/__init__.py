"""Kernels that ship with AscendSim: the reference code lessons show and tests use.

They are written like user code (pyasc-shaped, through :mod:`engine.asc`), so their source lines
appear in traces and findings exactly as a trainee's would.
"""

from . import (
    matmul_fast,  # noqa: F401  registers the fast path of matmul_tiled
    matmul_leaky_relu_fast,  # noqa: F401  registers the fast path of matmul_leaky_relu
)
