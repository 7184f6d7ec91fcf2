"""Kernels that ship with AscendSim: the reference code lessons show and tests use.

They are written like user code (pyasc-shaped, through :mod:`engine.asc`), so their source lines
appear in traces and findings exactly as a trainee's would. A kernel with a fast path names it where
it is declared (``@asc.jit(..., fast_path=...)``); see :mod:`engine.kernels.matmul_fast`.
"""
