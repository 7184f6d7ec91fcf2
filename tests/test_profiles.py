"""Hardware profiles: every file loads, numbers carry sources, bad files fail with a precise message."""

import json
import re
from pathlib import Path

import pytest

from engine.profiles.profile import PROFILE_DIR, ProfileError, list_profiles, load_profile

EXPECTED = {
    "ascend910b1",
    "ascend910b2",
    "ascend910b3",
    "ascend910b4",
    "ascend910a",
    "ascend310p3",
    "measured-accelerator",
}


def test_all_profiles_load():
    assert set(list_profiles()) == EXPECTED
    for name in EXPECTED:
        assert load_profile(name).name == name


def test_default_910b1_numbers_match_the_reference():
    p = load_profile()
    assert p.name == "ascend910b1"
    assert (p.chip.aic_cores, p.chip.aiv_cores, p.chip.clock_mhz) == (24, 48, 1850)
    assert (p.buffers.l1, p.buffers.l0a, p.buffers.l0b, p.buffers.l0c, p.buffers.ub) == (
        524288,
        65536,
        65536,
        131072,
        196608,
    )
    assert p.chip.l2_bytes == 192 * 2**20 and p.chip.device_memory_bytes == 64 * 2**30
    assert round(p.peak_fp16_flops / 1e12, 1) == 363.7  # 24 x 4096 x 2 x 1.85 GHz


def test_measured_profile_matches_the_measured_json():
    data = json.loads((PROFILE_DIR / "measured-accelerator.json").read_text())
    p = load_profile("measured-accelerator")
    for key in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable"):
        expected = tuple((row["MiB"], row[f"{key}_GBps"]) for row in data["copy_bandwidth_GBps"])
        assert getattr(p.host, key) == expected
    assert p.host.launch_call_us == data["kernel_launch_async_us"]
    assert p.op_matmul.measured == tuple((r["n"], r["seconds_per_call"]) for r in data["matmul_fp16_square"])
    # the AI cores are the 910B1's (based_on), not measured
    assert p.buffers == load_profile("ascend910b1").buffers


def test_every_number_in_a_profile_file_says_where_it_comes_from():
    number = re.compile(r"^\s*\w+\s*=\s*[-\d.e]+\s*(#.*)?$")
    for path in Path(PROFILE_DIR).glob("*.toml"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if number.match(line):
                assert "#" in line, f"{path.name}:{lineno} has no source comment: {line!r}"


def write(tmp_path, text):
    path = tmp_path / "broken.toml"
    path.write_text(text)
    return path


def base_text():
    return (PROFILE_DIR / "ascend910b1.toml").read_text()


def test_missing_key_is_named(tmp_path):
    path = write(tmp_path, base_text().replace("clock_mhz = 1850", ""))
    with pytest.raises(ProfileError, match=r"broken.toml: missing key chip.clock_mhz \(expected a number >= 0\)"):
        load_profile(path)


def test_wrong_type_is_named(tmp_path):
    path = write(tmp_path, base_text().replace("aic_cores = 24", 'aic_cores = "many"'))
    with pytest.raises(ProfileError, match=r"broken.toml: key chip.aic_cores must be an integer >= 0, got 'many'"):
        load_profile(path)


def test_unknown_key_is_named(tmp_path):
    path = write(tmp_path, base_text().replace("[buffers]", "[buffers]\nl3 = 5"))
    with pytest.raises(ProfileError, match=r"unknown key buffers.l3"):
        load_profile(path)


def test_bad_toml_and_bad_table(tmp_path):
    with pytest.raises(ProfileError, match="not valid TOML"):
        load_profile(write(tmp_path, "[chip\nname="))
    good = "h2d_pinned = [[1, 20.834], [1024, 25.994]]"
    text = base_text().replace(good, "h2d_pinned = [[1024, 25.994], [1, 20.834]]")
    with pytest.raises(ProfileError, match=r"host\.h2d_pinned must list its points in increasing order"):
        load_profile(write(tmp_path, text))


def test_unknown_profile_name():
    with pytest.raises(ProfileError, match="unknown profile 'ascend999'; known profiles: ascend310p3"):
        load_profile("ascend999")
