"""The sweep's decision room: which k to use, how sure that is, and what it rests on.

Pure over a sweep's per-question table; nothing here runs a model or imports the running of the
sweep above it. Its parts, each one job:

- :mod:`.defaults`: the margin, confidence, resamples and sequential knobs, in one place;
- :mod:`.objective`: what is maximised, parsed once (:class:`Objective`), and the fallback;
- :mod:`.outcomes`: what each answer is worth (a refusal is an outcome, a failed call a status);
- :mod:`.refusals`: how often each k refused, and whether it was right to;
- :mod:`.recommend`: the rule over a question x k table;
- :mod:`.looks`: the sweep's looks and the error each may spend, however often it is looked at;
- :mod:`.planning`: the questions that would settle it, by simulating the rule;
- :mod:`.sequential`: elimination and stopping for a run until decided;
- :mod:`.decide` and :mod:`.record`: the decision made from a table, and said.
"""

from __future__ import annotations

from rag_judge.jobs.sweep.decision.decide import decide, decide_table
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_SPENDING,
    DEFAULT_STEP,
    UNTIL_DECIDED_SPENDING,
)
from rag_judge.jobs.sweep.decision.objective import Objective, ObjectiveChoice, choose_objective
from rag_judge.jobs.sweep.decision.recommend import KStanding, Recommendation, recommend
from rag_judge.jobs.sweep.decision.record import Decision

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_MARGIN",
    "DEFAULT_SPENDING",
    "DEFAULT_STEP",
    "UNTIL_DECIDED_SPENDING",
    "Decision",
    "KStanding",
    "Objective",
    "ObjectiveChoice",
    "Recommendation",
    "choose_objective",
    "decide",
    "decide_table",
    "recommend",
]
