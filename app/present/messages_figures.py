"""The dashboard's figures' own words (the roofline's roofs and hover text), in English and Chinese: part of the
one catalogue of :mod:`app.present.messages` (look them up with ``t``). ``{tflops}``, ``{tbps}`` and the like
are filled in by :mod:`app.web.figures` with numbers already written as people read them."""

from __future__ import annotations

from types import MappingProxyType

FIGURES = MappingProxyType(
    {
        # the roofs (RooflineRow.bound_by names them)
        "fig.roof.compute": ("compute peak", "算力峰值"),
        "fig.roof.hbm": ("HBM bandwidth", "HBM 带宽"),
        "fig.roof.l2": ("L2 bandwidth", "L2 带宽"),
        "fig.roof.core_paths": ("the cores' GM paths", "各核 GM 通路带宽"),
        # the roofs' names on the chart: the compute roof of the unit that did the work, when known
        "fig.roof_peak": ("compute peak {tflops} TFLOPS", "算力峰值 {tflops} TFLOPS"),
        "fig.roof_peak.cube": ("Cube peak {tflops} TFLOPS", "Cube 峰值 {tflops} TFLOPS"),
        "fig.roof_peak.vector": ("Vector peak {tflops} TFLOPS", "Vector 峰值 {tflops} TFLOPS"),
        "fig.roof_peak.op": ("device peak {tflops} TFLOPS", "设备峰值 {tflops} TFLOPS"),
        "fig.roof_hbm": ("HBM {tbps} TB/s", "HBM 带宽 {tbps} TB/s"),
        "fig.roof_at": ("{roof} roof here: {tflops} TFLOPS", "此处的{roof}屋顶：{tflops} TFLOPS"),
        "fig.roof_point": ("{kernel}: {percent} % of {bound}", "{kernel}：{bound}的 {percent} %"),
        "fig.roof_hover": (
            "<b>{kernel}</b><br>{tflops} TFLOPS at {intensity} flop per HBM byte<br>"
            "bound by {bound}: {percent} % of that roof",
            "<b>{kernel}</b><br>{tflops} TFLOPS，算术强度 {intensity} flop / HBM 字节<br>"
            "受限于{bound}：达到该屋顶的 {percent} %",
        ),
    }
)

__all__ = ("FIGURES",)
