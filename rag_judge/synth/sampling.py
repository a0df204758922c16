"""Which chunks the questions are written from: spread across documents, seeded, not the first N.

The documents are shuffled, each document's chunks are shuffled, and the order takes one chunk
from each document in turn (round robin), so the first N chunks come from N different documents
whenever there are that many, and a long document cannot crowd out short ones. The same seed
and chunks give the same order, so an interrupted run asks the same questions again (and its
cache answers them).

>>> from rag_judge.pipeline.chunking import Chunk
>>> chunks = [Chunk(f"{d}#{i}", d, "x", 0, 1) for d in "ab" for i in range(3)]
>>> [c.doc_id for c in stratified_order(chunks, seed=0)]
['a', 'b', 'a', 'b', 'a', 'b']
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rag_judge.pipeline.chunking import Chunk


def stratified_order(chunks: Sequence[Chunk], *, seed: int) -> list[Chunk]:
    """Every chunk once, documents taking turns (see the module docstring)."""
    rng = random.Random(seed)
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.doc_id, []).append(chunk)
    documents = sorted(by_document)
    rng.shuffle(documents)
    queues = []
    for document in documents:
        own = list(by_document[document])
        rng.shuffle(own)
        queues.append(own)
    order: list[Chunk] = []
    for turn in range(max(map(len, queues), default=0)):
        order.extend(queue[turn] for queue in queues if turn < len(queue))
    return order


def overlaps(a: Chunk, b: Chunk) -> bool:
    """The two chunks share text (sentence windows of one document may)."""
    return a.doc_id == b.doc_id and a.start < b.end and b.start < a.end


def partner(chunk: Chunk, ranked: Sequence[Chunk]) -> Chunk | None:
    """The chunk to pair with ``chunk`` for a multi-source question: the best ranked (by
    similarity to it) from another document, else a non-overlapping one of its own; None when
    there is neither."""
    others = [c for c in ranked if c.id != chunk.id and not overlaps(c, chunk)]
    elsewhere = [c for c in others if c.doc_id != chunk.doc_id]
    chosen = elsewhere or others
    return chosen[0] if chosen else None
