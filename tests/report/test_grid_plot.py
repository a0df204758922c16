"""The grid's heat map: an arm with no value is a gap marked with a dash, never a number."""

from __future__ import annotations

import io

from PIL import Image

from rag_judge.report.grid_plot import grid_png


def test_an_arm_without_a_value_is_drawn_as_a_gap() -> None:
    configurations, ks = ("retriever=bm25", "retriever=dense"), (1, 2)
    means = {("retriever=bm25", 1): 0.5, ("retriever=bm25", 2): 0.4, ("retriever=dense", 1): 0.6}
    standing = {("retriever=dense", 1): "recommended", ("retriever=bm25", 2): "out"}
    png = grid_png(
        means, standing, {("retriever=bm25", 1): 0.8},
        configurations=configurations, ks=ks, objective="answer_f1",
        retrieval_name="doc_recall", title="a grid with a gap",
    )  # fmt: skip
    image = Image.open(io.BytesIO(png))
    assert image.size == (1500, 320)


def test_a_grid_with_no_value_at_all_still_draws() -> None:
    png = grid_png(
        {}, {}, {}, configurations=("chunk=set",), ks=(1,), objective="answer_f1",
        retrieval_name="", title="nothing measured",
    )  # fmt: skip
    assert png.startswith(b"\x89PNG")
