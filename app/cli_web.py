"""``ascendsim web``: serve the dashboard (lessons, playground, compare, export) and print its URL."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (127.0.0.1: this machine only)")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535), help="TCP port")
@click.option("--lang", default="en", show_default=True, type=click.Choice(["en", "zh"]), help="default language")
@click.option("--runs-dir", default=None, help="folder for stored runs (default: one in the temporary directory)")
def web(host: str, port: int, lang: str, runs_dir: str | None) -> None:
    """Serve the web dashboard; the default page opens lesson 1 ready to play."""
    from app.web.app import create_app

    app = create_app(runs_dir, lang)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"AscendSim dashboard on http://{shown}:{port}/  (Ctrl+C to stop)", err=False)
    app.run(host=host, port=port, debug=False, threaded=True)
