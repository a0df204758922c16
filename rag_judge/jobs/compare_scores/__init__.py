"""Did a change make the RAG system worse? Two score files compared row by row, and a gate.

``compare_scores`` pairs the rows of BASE and NEW by id and, per metric, compares the rows
scored on both sides (paired bootstrap CI of NEW − BASE, paired randomization p, McNemar on
pass/fail at a threshold), listing every row it could not pair and why. ``gate`` turns that,
or one run's means, into pass/fail decisions a CI build can exit on.
"""
