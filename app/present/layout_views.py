"""The fractal view of a slot of L1 / L0: which 16 x 16 block of which tile sits where, in what order.

One view-model for both UIs (the web's tile panel and the terminal's buffers pane only draw it), built from
:class:`app.present.fractals.SlotFractals`: the tile's grid of fractals with each cell's place in memory and
its inner order (row-major → or column-major ↓), the format's name, and a worked example of where one element
of the tile sits.
"""

from __future__ import annotations

from engine.aicore.layout import FRACTAL_ROWS

from .fractals import SlotFractals
from .messages import t as msg


def fractal_view(f: SlotFractals, dtype: str, itemsize: int, lang: str = "en", max_cells: int = 16) -> dict:
    """The fractals of a slot: ``cells[i][j]`` is the place in memory of the tile's fractal (i, j) (-1: none
    there), ``inner[i][j]`` "z" (row-major inside) or "n" (column-major); at most ``max_cells`` each way."""
    tensor, row, col, rows, cols = f.tile
    grid_r, grid_c = f.grid
    transposed = bool(f.places) and f.places[0][2]
    fr, fc = (f.fractal[1], f.fractal[0]) if transposed else f.fractal  # a fractal's rows x cols in the tile
    where = {(i, j): (p, t) for p, (i, j, t) in enumerate(f.places)}
    shown_r, shown_c = min(grid_r, max_cells), min(grid_c, max_cells)
    cells = [[where.get((i, j), (-1, False))[0] for j in range(shown_c)] for i in range(shown_r)]
    inner = [
        [("n" if where[(i, j)][1] else "z") if (i, j) in where else "" for j in range(shown_c)] for i in range(shown_r)
    ]
    r, c = min(rows - 1, FRACTAL_ROWS + 1), min(cols - 1, 5)  # an element in the second row of fractals
    i, j = r // fr, c // fc
    place, t = where.get((i, j), (0, False))
    within = (c % fc) * fr + r % fr if t else (r % fr) * fc + c % fc
    offset = f.starts[place] + within if place < len(f.starts) else within
    tile = f"{tensor}[{row}:{row + rows}, {col}:{col + cols}]"
    fmt = f.format.value
    return {
        "format": fmt,
        "format_label": msg(f"format.{fmt}", lang),
        "tile": tile,
        "title": msg(
            "fractal.title",
            lang,
            tile=tile,
            format=fmt,
            count=len(f.places),
            rows=f.fractal[0],
            cols=f.fractal[1],
            dtype=dtype,
            bytes=f.fractal[0] * f.fractal[1] * itemsize,
        ),
        "legend": msg("fractal.legend", lang),
        "where": msg(
            "fractal.where",
            lang,
            tensor=tensor,
            r=row + r,
            c=col + c,
            i=i,
            j=j,
            place=place,
            offset=offset,
            byte=offset * itemsize,
        ),
        "grid": [grid_r, grid_c],
        "fractal": [fr, fc],
        "cells": cells,
        "inner": inner,
        "row_starts": [row + fr * i for i in range(shown_r)],
        "col_starts": [col + fc * j for j in range(shown_c)],
        "rows_label": msg("fractal.rows", lang),
        "cols_label": msg("fractal.cols", lang),
        "more": msg("fractal.more", lang, n=grid_r * grid_c - shown_r * shown_c)
        if grid_r * grid_c > shown_r * shown_c
        else "",
    }


__all__ = ("fractal_view",)
