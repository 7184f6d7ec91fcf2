"""``ascendsim web``: serve the dashboard (lessons, playground, compare, export) and print its URL."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (127.0.0.1: this machine only)")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535), help="TCP port")
@click.option("--lang", default="en", show_default=True, type=click.Choice(["en", "zh"]), help="default language")
@click.option("--runs-dir", default=None, help="folder for stored runs (default: one in the temporary directory)")
@click.option(
    "--store-mb",
    default=None,
    type=click.IntRange(16, 1 << 24),
    help="the runs folder's cap on disk in MB; least recently used runs go first (default $ASCENDSIM_STORE_MB or 4096)",
)
@click.option(
    "--allow-unsandboxed-code",
    is_flag=True,
    help="run exercises from the browser without bubblewrap (your own laptop only: binds to 127.0.0.1 only)",
)
def web(
    host: str, port: int, lang: str, runs_dir: str | None, store_mb: int | None, allow_unsandboxed_code: bool
) -> None:
    """Serve the web dashboard; the default page opens lesson 1 ready to play."""
    from pathlib import Path

    from app.web.app import create_app
    from app.web.runs import usable

    from .usage import UsageFailure

    if runs_dir is not None and (why := usable(Path(runs_dir).expanduser())):
        raise UsageFailure(f"--runs-dir: {why}")
    if allow_unsandboxed_code and host != "127.0.0.1":
        raise UsageFailure(f"--host: with --allow-unsandboxed-code the server binds only to 127.0.0.1, got {host!r}")
    app = create_app(runs_dir, lang, store_mb, allow_unsandboxed_code)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"AscendSim dashboard on http://{shown}:{port}/  (Ctrl+C to stop)", err=False)
    app.run(host=host, port=port, debug=False, threaded=True)
