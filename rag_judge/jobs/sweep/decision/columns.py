"""The per-question table's columns that more than one part of the sweep reads."""

from __future__ import annotations

ID_COLUMNS = ("question_id", "type", "language", "k", "n_contexts")
COST_COLUMNS = ("calls", "prompt_tokens", "completion_tokens")
ANSWER_TOKENS = "answer_prompt_tokens"
"""Column: the generator's prompt tokens for the row's answer, what serving that k costs (empty
when the user's RAG answered; the judges' tokens are in ``prompt_tokens``)."""
ANSWERABLE = "answerable"
"""Column: False when the eval set marks the question unanswerable from its corpus."""
REFUSED = "refused"
"""Column: the answer asserts nothing (:func:`~rag_judge.judges.refusal.answer_refuses`); empty
when no answer was generated (a failed call is not a refusal)."""
RERANK_TOKENS = "rerank_prompt_tokens"
"""Column: the prompt tokens an LLM reranker sent to put the question's top K in order, the same
at every k (present only when a reranker asked the model); part of what serving the row costs."""
