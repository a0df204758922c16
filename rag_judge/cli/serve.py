"""``rag-judge serve``: the embedded model as an OpenAI-compatible server."""

from __future__ import annotations

import click

from rag_judge.cli.common import friendly_errors


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--model",
    "model_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A GGUF file (default: the embedded model).",
)
@click.option("--n-ctx", type=click.IntRange(min=512), default=8192, show_default=True)
@click.option("--n-threads", type=click.IntRange(min=1), help="CPU threads (default: all).")
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
@friendly_errors
def serve(
    host: str,
    port: int,
    model_path: str | None,
    n_ctx: int,
    n_threads: int | None,
    extra: tuple[str, ...],
) -> None:
    """Serve the embedded model with llama-cpp-python's OpenAI-compatible server.

    Then judge through it from any process or machine, e.g. `rag-judge score rows.jsonl -o
    out.jsonl --model openai-compatible/local --base-url http://127.0.0.1:8000/v1`.
    Arguments after the options go to `python -m llama_cpp.server` as they are.
    """
    from rag_judge.backends.local.llama_server import check_gguf, check_port_free, server_arguments
    from rag_judge.backends.local.llama_server import serve as run_server

    if model_path is not None:
        check_gguf(model_path)  # before loading anything: not after ~1,900 lines of loader log
    check_port_free(host, port)
    arguments = server_arguments(
        model=model_path, host=host, port=port, n_ctx=n_ctx, n_threads=n_threads, extra=extra
    )
    click.echo(f"serving on http://{host}:{port}/v1 (Ctrl-C stops)", err=True)
    run_server(arguments)
