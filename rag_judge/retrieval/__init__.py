"""Pure retrieval-metric core: measures as values, trec_eval semantics, no models.

>>> from rag_judge.retrieval import evaluate
>>> result = evaluate({"q1": {"d1": 1}}, {"q1": ["d2", "d1"]}, ["mrr", "hit_rate@1"])
>>> result.aggregate()
{'mrr': 0.5, 'hit_rate@1': 0.0}
"""

from rag_judge.retrieval.evaluate import evaluate
from rag_judge.retrieval.measure import FAMILIES, Measure, parse_measure, parse_measures
from rag_judge.retrieval.ranking import RankedGrades, rank_documents
from rag_judge.retrieval.result import EvalResult, EvalSettings
from rag_judge.retrieval.trec_io import read_qrels, read_run, write_qrels, write_run

__all__ = [
    "FAMILIES",
    "EvalResult",
    "EvalSettings",
    "Measure",
    "RankedGrades",
    "evaluate",
    "parse_measure",
    "parse_measures",
    "rank_documents",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
