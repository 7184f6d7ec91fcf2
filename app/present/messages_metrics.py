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
    }
)
