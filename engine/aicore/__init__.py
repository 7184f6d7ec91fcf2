"""The AI-core model: buffers, pipes, synchronisation, SPMD dispatch and the per-core scheduler.

Kernel code (pyasc-shaped, see :mod:`engine.asc`) runs once per block and records a *program*:
the instructions it issued, each on its pipe, with its cost, its flags and the memory it touched.
Numerics happen while recording (every copy moves numpy bytes, mmad multiplies). The
:mod:`~engine.aicore.dispatch` scheduler then times the programs of all blocks on the cores,
with shared GM/L2 bandwidth, and writes the per-core pipe lanes of the trace.
"""
