"""Where a sweep's test lives between runs: one JSON file per sweep, beside the response cache.

Every run of the same sweep (the same eval set, ks, objective, judges, RAG under test, models,
judging path and confidence; not its ``--limit``, margin or way of running, plain or until
decided) is a look of one test (:class:`~rag_judge.jobs.sweep.decision.looks.SweepLooks`): its
record is read before the decision and written after it, so a re-run with more questions spends
what is left of the error rather than the whole of it again. The first run fixes the test's
horizon and spending (:func:`new_test`). The margin is not part of the key: the bounds hold for
every margin at once, so a margin chosen after a look costs no coverage. A sweep without a
response cache keeps no record, and its decision says so.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.objective import default_objective
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.runtime import atomic
from rag_judge.runtime.session import Session

FOLDER = "decisions"
"""The folder of test records, beside the response cache's file."""
NOT_RECORDED = (
    "No response cache, so no record of this sweep's looks: its confidence holds for this look "
    "alone, and a re-run with more questions would be a new test."
)


def record_key(eval_set: EvalSet, options: SweepOptions, session: Session) -> str:
    """What makes two runs looks of one test, as a digest (see the module docstring)."""
    questions = hashlib.sha256()
    for query in eval_set.queries:
        questions.update(f"{query.id}\0{query.question}\0".encode())
    rag = options.rag
    identity = {
        "eval_set": eval_set.name,
        "questions": questions.hexdigest(),
        "ks": list(options.ks),
        "objective": str(options.objective or default_objective(eval_set.reference_kind)),
        "metrics": list(options.metrics),
        "retriever": options.retriever,
        "rerank": options.rerank,
        "rerank_depth": options.rerank_depth,
        "rag": rag if isinstance(rag, str) or rag is None else type(rag).__qualname__,
        **({} if options.chunk is None else {"chunk": str(options.chunk)}),
        **({} if options.grid is None else {"grid": str(options.grid)}),
        "generator": session.settings.generator_model,
        "judge": session.settings.judge_model,
        "mode": options.judge.mode,
        "confidence": options.confidence,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def record_path(session: Session, key: str) -> Path | None:
    """The record's file (None without a response cache)."""
    if session.cache is None:
        return None
    return session.cache.path.parent / FOLDER / f"{key}.json"


def new_test(horizon: int, options: SweepOptions) -> SweepLooks:
    """A sweep's first look opens its test: the error spent over ``horizon`` questions (the eval
    set's for a plain sweep, those a run until decided may use) as :attr:`SweepOptions.
    test_spending` says. Later runs keep both: the first run fixes its test."""
    return SweepLooks(horizon, 1 - options.confidence, options.test_spending)


def load_looks(path: Path | None, horizon: int, options: SweepOptions) -> SweepLooks | None:
    """The sweep's looks: its record if one was written, else a new test over ``horizon``
    questions (None without a file to keep it in).

    Raises:
        InputError: a record file that is not one (it names the file).
    """
    if path is None:
        return None
    if not path.exists():
        return new_test(horizon, options)
    try:
        return SweepLooks.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, InputError) as error:
        raise InputError(
            f"the sweep's record of looks {path} is damaged ({error}); delete it to start a new "
            "test (its looks' error is then spent again)",
            field="record",
        ) from None


def save_looks(path: Path | None, looks: SweepLooks | None) -> None:
    """Write the record (nothing without a file or looks)."""
    if path is None or looks is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(looks.as_json(), indent=2) + "\n")
