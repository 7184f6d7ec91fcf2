"""Small parameters for every built-in scenario: a run of each in well under a second (a test over every scenario
takes its parameters from here, so a new scenario without an entry fails them all by name)."""

SMALL = {
    "host-lifecycle": {"n": 128},
    "pipeline": {"n": 256, "batches": 4, "streams": 2},
    "matmul": {"m": 256, "n": 192, "k": 320},
    "matmul-leaky-relu": {"m": 128, "n": 96, "k": 128},
    "vector-add": {"length": 20_000},
    "debug-demo": {"bug": "none"},
    "dynamic-shapes": {"sequence": "random", "count": 3},
}
