"""``rag-judge models``: which chat and embedding backends can run here, and why not."""

from __future__ import annotations

import click


@click.command()
def models() -> None:
    """List the chat and embedding backends, and why any of them cannot run here."""
    from rag_judge.backends.availability import list_models

    for item in list_models():
        state = "available" if item.available else f"unavailable: {item.reason}"
        click.echo(f"{item.kind:<10} {item.name:<36} {state}")
