"""The analysis report's figures by name, in English and Chinese (a glossary: what each id measures, in
words a trainee reads); part of the one catalogue of :mod:`app.present.messages` (``metric_name``)."""

from __future__ import annotations

from types import MappingProxyType

METRIC_NAMES = MappingProxyType(
    {
        "simulated_us": ("simulated time (us)", "模拟时间（us）"),
        "kernel_us": ("time any kernel ran (us)", "核函数运行时间（us）"),
        "tflops": ("achieved TFLOPS", "实际 TFLOPS"),
        "percent_of_peak": ("% of the unit's peak", "所用单元的峰值占比 %"),
        "cube_utilization": ("Cube busy share (aic_mac_ratio)", "Cube 忙碌占比（aic_mac_ratio）"),
        "memory_bound_index": (
            "memory-bound index: waiting for data / (that + computing)",
            "访存受限指数：等待数据 /（等待 + 计算）",
        ),
        "parallelism_utilization": (
            "parallelism: block time / (cores x kernel time)",
            "并行度：块时间 /（核数 × 核函数时间）",
        ),
        "mte2_compute_overlap": (
            "compute time with MTE2 loading beside it (share)",
            "计算时 MTE2 同时搬入的占比",
        ),
        "host_api_us": ("host time inside API calls (us)", "主机在 API 调用内的时间（us）"),
        "host_wait_us": ("host time blocked in a call (us)", "主机阻塞等待的时间（us）"),
        "host_work_us": ("host computation, e.g. tiling (us)", "主机计算时间（如 tiling）（us）"),
        "host_wall_us": ("host wall time (us)", "主机墙钟时间（us）"),
        "device_busy_us": ("time some stream executed (us)", "有流在执行的时间（us）"),
        "host_share": ("host share of the work span", "主机在工作时段中的占比"),
        "balance_score": ("host/device balance score (1 = host ≤ 10 %)", "主机/设备平衡分（1 表示主机 ≤ 10%）"),
        "copy_us": ("copy engine time (us)", "拷贝引擎时间（us）"),
        "copy_compute_overlap": ("copy time with a kernel running (share)", "拷贝时有核函数运行的占比"),
        "streams_used": ("streams used", "使用的流数"),
        "kernel_count": ("kernels", "核函数个数"),
        # msprof's pipe ratios: the share of the kernel's time each pipe of an AI core was busy
        "aic_mac_ratio": ("Cube busy share", "Cube 忙碌占比"),
        "aic_scalar_ratio": ("Cube core's scalar unit busy share", "Cube 核标量单元忙碌占比"),
        "aic_mte1_ratio": ("MTE1 (L1 → L0A/L0B) busy share", "MTE1（L1 → L0A/L0B）忙碌占比"),
        "aic_mte2_ratio": ("MTE2 (GM → L1) busy share", "MTE2（GM → L1）忙碌占比"),
        "aic_fixpipe_ratio": ("FixPipe (L0C → GM) busy share", "FixPipe（L0C → GM）忙碌占比"),
        "aiv_vec_ratio": ("Vector busy share", "Vector 忙碌占比"),
        "aiv_scalar_ratio": ("vector core's scalar unit busy share", "Vector 核标量单元忙碌占比"),
        "aiv_mte2_ratio": ("MTE2 (GM → UB) busy share", "MTE2（GM → UB）忙碌占比"),
        "aiv_mte3_ratio": ("MTE3 (UB → GM) busy share", "MTE3（UB → GM）忙碌占比"),
        # what the recommendations' rules read (their evidence)
        "mte2_ratio": ("MTE2 busy share", "MTE2 忙碌占比"),
        "kernel": ("kernel", "核函数"),
        "base": ("base block (baseM, baseN, baseK)", "基本块（baseM, baseN, baseK）"),
        "host_blocked_in_pageable_copies_us": (
            "host blocked in pageable copies (us)",
            "主机阻塞在可分页内存拷贝中的时间（us）",
        ),
        "share_of_run": ("share of the run", "占整个运行的比例"),
        "copy_share_of_device_time": ("copies' share of device time", "拷贝占设备时间的比例"),
        "cores_used": ("cores that ran a block", "分到块的核数"),
        "cores_available": ("cores of that type", "该类型的核数"),
        "blocks": ("blocks", "块数"),
        "tail_idle_us": ("cores idle in the tail, summed over cores (us)", "尾部空闲时间，各核之和（us）"),
        "share_of_core_time": ("share of core time", "占核时间的比例"),
        "host_tiling_us": ("host tiling time (us)", "主机 tiling 时间（us）"),
        "tiling_on_critical_path_us": (
            "tiling while the device idled (us)",
            "设备空闲时的 tiling 时间（us）",
        ),
        "tilings_computed": ("tilings computed", "计算 tiling 的次数"),
        "streams_waiting_for_host_us": (
            "streams waiting for the host, summed over streams (us)",
            "流等待主机的时间，各流之和（us）",
        ),
        "share": ("share", "占比"),
        "over": ("over the phase", "统计阶段"),
    }
)

# the headline figures' names where a pane is narrow (the terminal UI at 80 columns)
METRIC_SHORT = MappingProxyType(
    {
        "simulated_us": ("simulated us", "模拟 us"),
        "kernel_us": ("kernel us", "核函数 us"),
        "tflops": ("TFLOPS", "TFLOPS"),
        "percent_of_peak": ("% of peak", "峰值 %"),
    }
)
