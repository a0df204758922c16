"""The labelling log on disk: resumed when it exists, every event appended, flushed and synced
before the page hears it was kept, so a closed tab or a killed server loses no label."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rag_judge.calibration.label_log import (
    ClaimLabel,
    LabelLog,
    RowLabel,
    Sampling,
    fold_label_log,
    fold_label_rows,
    is_label_log,
    label_event,
    undo_event,
)
from rag_judge.core.errors import InputError
from rag_judge.data.readers import Where, read_jsonl
from rag_judge.labelling.plan import ALL, LabelPlan

OPTION = MappingProxyType(
    {"strategy": "--strategy", "seed": "--seed", "sample": "--sample", "scores": "SCORES"}
)
"""The command-line option behind each sampling field, to say what differs on a resume."""


class Refused(InputError):
    """A request the session cannot honour as asked (a row already labelled, nothing to undo)."""


def append_label_event(path: Path, event: Mapping[str, Any]) -> None:
    """Append one event as a line, flushed and synced to disk before returning."""
    line = json.dumps(event, ensure_ascii=False, allow_nan=False) + "\n"
    with path.open("a", encoding="utf-8") as log:
        log.write(line)
        log.flush()
        os.fsync(log.fileno())


class LabelStore:
    """One labelling session's log: which rows are done, which comes next, and the writes."""

    def __init__(self, path: Path, plan: LabelPlan, annotator: str) -> None:
        """Open (or start) the log at ``path`` for ``plan``.

        Raises:
            InputError: the file is no labelling log, or it holds another sample's labels.
        """
        self.path = path
        self.plan = plan
        self.annotator = annotator
        self.repaired = repair_cut_line(path)
        self._events = list(read_jsonl(path)) if path.exists() else []
        if self._events and not is_label_log(record for _, record in self._events):
            raise InputError(
                "is not a log of rag-judge label (its lines carry no 'sampling'); give another -o",
                source=str(path),
            )
        self.log = fold_label_rows(self._events)
        check_resume(self.log, plan, path)
        self._lock = threading.Lock()
        self.undone: dict[str, RowLabel] = {}
        """The labels taken back in this session, by id: the page offers them again."""

    @property
    def next_id(self) -> str | None:
        """The first row of the sample neither labelled nor skipped; None when all are done."""
        done = self.log.done
        return next((id_ for id_ in self.plan.ids if id_ not in done), None)

    def label(
        self, id_: str, label: int | None, *, note: str, claims: Iterable[ClaimLabel]
    ) -> None:
        """Record a label (1, 0) or a skip (None) of a row not yet done.

        Raises:
            Refused: the row is not in the sample or already labelled or skipped.
        """
        with self._lock:
            if id_ not in self.plan.rows:
                raise Refused(f"row '{id_}' is not in this sample")
            if id_ in self.log.done:
                raise Refused(f"row '{id_}' is already labelled; undo it first")
            event = label_event(
                id_,
                label,
                metric=self.plan.metric,
                annotator=self.annotator,
                sampling=self.plan.sampling,
                note=note,
                claims=claims,
            )
            self._append(event)

    def undo(self) -> str:
        """Take back the latest standing label or skip; the id it was.

        Raises:
            Refused: nothing to undo.
        """
        with self._lock:
            if not self.log.order:
                raise Refused("nothing to undo")
            id_ = self.log.order[-1]
            taken_back = next(row for row in self.log.rows if row.id == id_)
            event = undo_event(id_, annotator=self.annotator, sampling=self.plan.sampling)
            self._append(event)
            self.undone[id_] = taken_back
            return id_

    def _append(self, event: dict[str, Any]) -> None:
        append_label_event(self.path, event)
        self._events.append((self._where(), event))
        self.log = fold_label_rows(self._events)

    def _where(self) -> Where:
        return Where(str(self.path), len(self._events), line=len(self._events) + 1)


def check_resume(log: LabelLog, plan: LabelPlan, path: Path) -> None:
    """A log resumed must be of the same sample: the same score file, metric, strategy, seed
    and size, and every row it labels one of the sample's.

    Raises:
        InputError: naming what differs.
    """
    if log.sampling is None:
        return
    differ = _sampling_differences(plan.sampling, log.sampling)
    metrics = {row.metric for row in log.rows if row.metric is not None}
    if metrics - {plan.metric}:
        differ.append(f"--metric {plan.metric} here, {', '.join(sorted(metrics))} in the log")
    if not differ and (strays := [row.id for row in log.rows if row.id not in plan.rows]):
        differ.append(f"the log labels rows this sample lacks (first: '{strays[0]}')")
    if differ:
        raise InputError(
            f"holds the labels of another sample ({'; '.join(differ)}): give the options it "
            "was started with to resume it, or another -o",
            source=str(path),
        )


def _sampling_differences(here: Sampling, logged: Sampling) -> list[str]:
    differ = []
    for name, option in OPTION.items():
        mine, theirs = (_given(getattr(s, name)) for s in (here, logged))
        if name == "scores" and _same_file(mine, theirs):
            continue
        if mine != theirs:
            differ.append(f"{option} {_shown(mine)} here, {_shown(theirs)} in the log")
    if not differ and here.population != logged.population:
        differ.append(
            f"SCORES has {here.population} scored rows, {logged.population} when the log began"
        )
    return differ


def _given(value: Any) -> Any:
    """A sampling field as the command line gave it: no option for every row's "all"."""
    return None if value == ALL else value


def _shown(value: Any) -> str:
    return "(none)" if value is None else str(value)


def _same_file(a: str, b: str) -> bool:
    try:
        return a == b or os.path.samefile(a, b)
    except OSError:
        return False


def repair_cut_line(path: Path) -> bool:
    """Drop a last line cut off mid-write (a server killed while writing it: the page never
    heard it was kept); a whole last line that only lacks its newline gets one. True when a
    cut line was dropped."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return False
    start = data.rfind(b"\n") + 1
    try:
        fold_label_log([json.loads(data[start:])])
    except (ValueError, InputError):
        with path.open("r+b") as log:
            log.truncate(start)
        return True
    with path.open("ab") as log:
        log.write(b"\n")
    return False
