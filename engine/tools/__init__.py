"""Tools around the simulator: ``bench`` (how fast it is on this machine) and ``calibration`` (published
Ascend profiling results, one TOML case each in ``calibration_cases``, run through the simulator side by side).
"""
