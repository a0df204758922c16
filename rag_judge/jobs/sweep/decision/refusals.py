"""How often the RAG refused at each k, and whether it was right to.

Three per-row indicators, summarised per k like any measure (mean = share, with a CI):

- ``refusal_rate``: the answer is a refusal (over the rows with an answer; a failed call is not
  a refusal and has no value here);
- ``refused_with_answer_in_top_k``: a refusal although a passage in the top k held the answer
  (over the rows whose top k held it): the generator gave up on passages it had;
- ``answered_without_answer_in_top_k``: an answer that asserts something although no passage in
  the top k held the answer (over the rows whose top k did not hold it; a question the set marks
  unanswerable never has one): the generator answered from elsewhere, or invented.

Whether the top k held the answer is read from relevance by answer text (``text_hit_rate``),
else by document id (``doc_hit_rate``); a row with neither has no value in the last two.
"""

from __future__ import annotations

import pandas as pd

from rag_judge.jobs.sweep.decision.columns import ANSWERABLE, REFUSED

REFUSAL_MEASURES = (
    "refusal_rate",
    "refused_with_answer_in_top_k",
    "answered_without_answer_in_top_k",
)
"""The per-k refusal figures, in the order tables show them."""
HELD_BY = ("text_hit_rate", "doc_hit_rate")
"""Where "a passage in the top k held the answer" is read from, first present first."""


def answer_in_top_k(frame: pd.DataFrame) -> pd.Series:
    """Per row: did a passage in the top k hold the answer (boolean; NA when unknown)? A question
    marked unanswerable has none to hold."""
    column = next((c for c in HELD_BY if c in frame.columns), None)
    held = (
        frame[column].astype("Float64") >= 1.0
        if column is not None
        else pd.Series(pd.NA, index=frame.index, dtype="boolean")
    )
    held = held.astype("boolean")
    if ANSWERABLE in frame.columns:
        held = held.mask(frame[ANSWERABLE].eq(False).fillna(False), False)
    return held


def refusal_indicators(frame: pd.DataFrame) -> pd.DataFrame:
    """The three indicators of :data:`REFUSAL_MEASURES` per row, as nullable floats (1, 0, or
    missing where the row does not count)."""
    refused = (
        frame[REFUSED].astype("boolean")
        if REFUSED in frame.columns
        else pd.Series(pd.NA, index=frame.index, dtype="boolean")
    )
    held = answer_in_top_k(frame)
    as_float = refused.astype("Float64")
    return pd.DataFrame(
        {
            "refusal_rate": as_float,
            "refused_with_answer_in_top_k": as_float.where(held.eq(True).fillna(False)),
            "answered_without_answer_in_top_k": (1 - as_float).where(held.eq(False).fillna(False)),
        },
        index=frame.index,
    )
