"""``ascendsim calibrate``: published Ascend profiling results beside the simulator's figures.

Runs every case of :mod:`engine.tools.calibration` (or the ones named with ``--case``) and prints, per
case, each published figure, the simulated one and the error (relative for the task time, in points
for a pipe ratio) with its tolerance where it has one, the busiest pipe on both sides, and where the
published numbers come from.
"""

from __future__ import annotations

import json

import click


@click.command()
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--case", "case_ids", multiple=True, help="run only this case (repeatable); default: every case")
def calibrate(as_json: bool, case_ids: tuple[str, ...]) -> None:
    """Run the published profiling cases through the simulator and print both side by side."""
    from engine.tools.calibration import CalibrationError
    from engine.tools.calibration import calibrate as run_calibration

    try:
        doc = run_calibration(case_ids)
    except CalibrationError as exc:
        raise click.UsageError(f"--case: {exc}") from None
    if as_json:
        click.echo(json.dumps(doc))
        return
    click.echo(render(doc))


def render(doc: dict) -> str:
    lines = []
    for row in doc["cases"]:
        src = row["source"]
        lines.append(f"{row['id']} ({row['profile']}): {row['title']}")
        lines.append(f"  source: {src['repository']} {src['path']} @ {src['commit'][:12]}")
        lines.append(f"          {src['section']}")
        lines.append(f"  {'figure':<20} {'published':>12} {'simulated':>12} {'error':>10}   tolerance")
        for f in row["figures"]:
            if f["figure"] == "task_us":
                err = f"{100 * f['error']:+.1f} %"
                text = f"  {'task time (us)':<20} {f['published']:>12.2f} {f['simulated']:>12.2f} {err:>10}"
                unit = "%"
            else:
                err = f"{100 * f['error']:+.1f} pt"
                text = f"  {f['figure']:<20} {f['published']:>12.3f} {f['simulated']:>12.3f} {err:>10}"
                unit = "pt"
            if "tolerance" in f:
                text += f"   +-{100 * f['tolerance']:.0f} {unit} {'ok' if f['within'] else 'OUT'}"
            lines.append(text)
        b = row["busiest"]
        verdict = "ok" if row["within_tolerance"] else "OUT OF TOLERANCE"
        lines.append(f"  busiest pipe: published {b['published']}, simulated {b['simulated']}   {verdict}")
        lines.append("")
    s = doc["summary"]
    tol = doc["tolerance"]
    lines.append(
        f"{s['within_tolerance']}/{s['cases']} cases within tolerance (task time +-{100 * tol['task_us']:.0f} %, "
        f"same busiest pipe, mac ratio +-{100 * tol['mac']:.0f} pt, scalar ratio +-{100 * tol['scalar']:.0f} pt); "
        f"max |task error| {100 * s['max_abs_task_error']:.1f} %, "
        f"geometric mean simulated/published {s['geomean_task_ratio']:.3f}"
    )
    return "\n".join(lines)
