"""The parts of a bundled retrieval set's files that every builder writes the same way.

Shared by ``build.py`` and the set modules beside it (``squad2.py``), so that neither imports
the other: JSON lines, the qrels file, the rotating round-robin query order and the manifest's
``counts``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import zip_longest
from typing import Any

Row = dict[str, Any]
Files = dict[str, str]


def jsonl(rows: Iterable[Row]) -> str:
    """One compact JSON object per line, UTF-8 characters kept as they are."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def qrels_tsv(rows: Iterable[tuple[str, str, int]]) -> str:
    """The qrels file: a header, then ``query_id<TAB>doc_id<TAB>relevance`` lines."""
    lines = ["query_id\tdoc_id\trelevance\n"]
    lines += [f"{qid}\t{doc}\t{grade}\n" for qid, doc, grade in rows]
    return "".join(lines)


def interleave(groups: Sequence[Sequence[Row]]) -> list[Row]:
    """Round-robin with rotation: round r takes item ``(i + r) mod len`` of the i-th group.

    Every round takes one item from each group still holding items, so the first
    ``len(groups)`` items come from different groups; the rotation makes round 0 take items
    from all positions (not only each group's first item).
    """
    rotated = [
        [*group[i % len(group) :], *group[: i % len(group)]] for i, group in enumerate(groups)
    ]
    return [row for layer in zip_longest(*rotated) for row in layer if row is not None]


def set_counts(corpus: list[Row], queries: list[Row], qrels: list[Any]) -> Row:
    """The manifest's ``counts``: sizes, relevant judgements, grades and question types."""
    relevant = [row for row in qrels if row[2] >= 1]
    with_relevant = {row[0] for row in relevant}
    return {
        "documents": len(corpus),
        "queries": len(queries),
        "qrels": len(qrels),
        "relevant_judgements": len(relevant),
        "queries_with_relevant": len(with_relevant),
        "queries_with_answers": sum(1 for q in queries if q["answers"]),
        "grades": {str(g): n for g, n in sorted(Counter(row[2] for row in qrels).items())},
        "types": dict(Counter(q["type"] for q in queries).most_common()),
    }
