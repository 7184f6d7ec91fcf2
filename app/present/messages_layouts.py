"""The words of the Cube's data layouts in the views, English and Chinese: each format's name as CANN's
documents give it (大Z小z ...), and the fractal view's title, legend and rule for where an element sits."""

from __future__ import annotations

from types import MappingProxyType

from engine.aicore.layout import Format

LAYOUTS = MappingProxyType(
    {
        f"format.{Format.ND.value}": ("ND: row-major", "ND：行优先"),
        f"format.{Format.NZ.value}": (
            "NZ (CANN's Nz): columns of fractals, each row-major",
            "NZ（大N小z）：分形按列排列，分形内行优先",
        ),
        f"format.{Format.ZZ.value}": (
            "ZZ (CANN's Zz): rows of fractals, each row-major",
            "ZZ（大Z小z）：分形按行排列，分形内行优先",
        ),
        f"format.{Format.ZN.value}": (
            "ZN (CANN's Zn): rows of fractals, each column-major",
            "ZN（大Z小n）：分形按行排列，分形内列优先",
        ),
        f"format.{Format.NN.value}": (
            "NN: columns of fractals, each column-major",
            "NN（大N小n）：分形按列排列，分形内列优先",
        ),
        f"format.{Format.MIXED.value}": ("fractals in no single layout", "不属于任何一种排布的分形"),
        f"format.{Format.EMPTY.value}": ("empty", "空"),
        "fractal.title": (
            "{tile} in {format}: {count} fractals of {rows} x {cols} {dtype} ({bytes} B each)",
            "{tile}，{format}：{count} 个 {rows} x {cols} 的 {dtype} 分形（每个 {bytes} B）",
        ),
        "fractal.legend": (
            "one cell per fractal, drawn where it sits in the tile; the number is its place in memory; "
            "→ row-major inside it, ↓ column-major",
            "每格一个分形，画在它在分块中的位置；数字是它在内存中的次序；→ 分形内行优先，↓ 分形内列优先",
        ),
        "fractal.where": (
            "{tensor}[{r}, {c}] sits in fractal ({i}, {j}), place {place}: element {offset} of the slot (byte {byte})",
            "{tensor}[{r}, {c}] 位于分形 ({i}, {j})，次序 {place}：槽位中的第 {offset} 个元素（第 {byte} 字节）",
        ),
        "fractal.rows": ("rows", "行"),
        "fractal.cols": ("cols", "列"),
        "fractal.more": ("… {n} more", "… 另有 {n} 个"),
    }
)
