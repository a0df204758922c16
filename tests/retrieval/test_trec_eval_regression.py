"""trec_eval's own regression suite, reproduced to the 4 decimals trec_eval prints.

Fixtures are trec_eval's test/ files (tests/fixtures/trec_eval, see SOURCE.txt there); the
commands that produced each out.* file are in quicktest_commands.txt beside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_judge.core.errors import UnknownMeasureError
from rag_judge.retrieval import evaluate, parse_measure, read_qrels, read_run

TREC = Path(__file__).parents[1] / "fixtures" / "trec_eval"

#: trec_eval measure names this core implements; each must appear in the fixtures below.
SUPPORTED_PREFIXES = (
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_", "recall_",
    "ndcg", "ndcg_cut_", "map_cut_", "success_", "set_P", "set_recall", "set_F",
)  # fmt: skip


def _our_measure(trec_name: str) -> str | None:
    """Our measure for a trec_eval output name, or None for measures we do not implement."""
    if trec_name.startswith("ndcg_") and "=" in trec_name:
        return "ndcg[" + trec_name.removeprefix("ndcg_") + "]"
    try:
        measure = parse_measure(trec_name)
    except UnknownMeasureError:
        return None
    return measure.name


def _expected(path: Path) -> dict[tuple[str, str], str]:
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        out[(name, qid)] = value
    return out


def _check(out_file: str, qrels: str, run: str, **settings: object) -> int:
    expected = _expected(TREC / out_file)
    names = {name: _our_measure(name) for name, _ in expected}
    ours = sorted({m for m in names.values() if m is not None})
    result = evaluate(read_qrels(TREC / qrels), read_run(TREC / run), ours, **settings)  # type: ignore[arg-type]
    per_query, aggregate = result.per_query(), result.aggregate()
    checked = 0
    for (name, qid), text in expected.items():
        if name == "num_q":
            assert int(text) == len(result.query_ids)
            continue
        measure = names[name]
        if measure is None:
            continue
        value = aggregate[measure] if qid == "all" else per_query[qid][measure]
        printed = f"{value:.0f}" if "." not in text else f"{value:.4f}"
        assert printed == text, f"{out_file}: {name} ({measure}) for {qid}: {printed} != {text}"
        checked += 1
    return checked


@pytest.mark.parametrize(
    ("out_file", "qrels", "run", "settings"),
    [
        ("out.test", "qrels.test", "results.test", {}),
        ("out.test", "qrels.test.with-comments", "results.test", {}),
        ("out.test.a", "qrels.test", "results.test", {}),
        ("out.test.aq", "qrels.test", "results.test", {}),
        ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),
        ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "max_depth": 100}),
        ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
        ("out.test.meas_params", "qrels.test", "results.test", {}),
        ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
    ],
)
def test_reproduces_trec_eval_output(
    out_file: str, qrels: str, run: str, settings: dict[str, object]
) -> None:
    assert _check(out_file, qrels, run, **settings) > 0


def test_every_supported_trec_measure_is_checked_per_query() -> None:
    """Guard against a silently shrinking test: all implemented trec_eval names are covered."""
    names = {name for name, qid in _expected(TREC / "out.test.aq") if qid != "all"}
    covered = {n for n in names if _our_measure(n) is not None}
    for prefix in SUPPORTED_PREFIXES:
        assert any(n == prefix or n.startswith(prefix) for n in covered), prefix
    # 3 queries + the "all" row for each of the 49 implemented trec_eval names.
    assert _check("out.test.aq", "qrels.test", "results.test") == 4 * 49
