"""What an evaluation returns: per-sample judge results, a summary with intervals, tables.

Every metric's summary says how many samples it scored and why the others were not: a mean
over 12 of 20 rows is reported as exactly that, never silently as a mean over 20.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.calibration.profile import CalibratedValue
from rag_judge.core.nested_bootstrap import two_level_bootstrap_ci, within_spread
from rag_judge.core.stats import bootstrap_mean_ci
from rag_judge.core.types import JudgeResult, RagSample
from rag_judge.data.score_file import score_line, score_record, write_score_file
from rag_judge.runtime.atomic import write_lines

if TYPE_CHECKING:
    import pandas as pd


class Repeat(BaseModel):
    """One repeat's outcome of one judge on one sample."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    status: str


class SampleResult(BaseModel):
    """Every judge's result on one sample."""

    model_config = ConfigDict(frozen=True)

    sample: RagSample
    """The row as judged."""
    language: str
    """The sample's language (given or detected)."""
    prompt_language: str
    """The language of the prompts used (English when there are none for ``language``)."""
    results: dict[str, JudgeResult] = Field(default_factory=dict)
    """Judge results by metric name."""
    judge_mode: str | None = None
    """The path the judges took: ``score`` or ``generate`` (None: not recorded)."""
    judge_mode_note: str = ""
    """Why it is not the path asked for, e.g. a server without log-probabilities ("" if it is)."""
    repeats: dict[str, list[Repeat]] = Field(default_factory=dict)
    """With ``repeats``: per metric, every repeat's value and status (``results`` holds repeat
    0's full result); empty when each row was judged once."""
    calibrated: dict[str, CalibratedValue] = Field(default_factory=dict)
    """With a calibration profile: per metric, the calibrated probability and verdict (the
    raw value stays in ``results``)."""

    @property
    def failed(self) -> bool:
        """True when a model call of any judge on this row failed (a progress bar's "failed")."""
        return any(result.failed for result in self.results.values())


class MetricSummary(BaseModel):
    """One metric over all samples: the mean of scored rows with its interval, and the rest."""

    model_config = ConfigDict(frozen=True)

    metric: str
    mean: float | None
    """Mean over scored samples; None when none was scored."""
    ci_low: float | None
    """Lower end of the bootstrap confidence interval of the mean."""
    ci_high: float | None
    """Upper end of the bootstrap confidence interval of the mean."""
    n_scored: int
    """Samples with a value."""
    n: int
    """Samples judged (scored or not)."""
    statuses: dict[str, int]
    """How many samples ended with each status."""
    judge_sd: float | None = None
    """With repeats: the judge's own run-to-run spread (pooled within-row SD of the repeats);
    the interval is then a two-level bootstrap (rows, then repeats). None: judged once."""


class EvaluationResult:
    """The outcome of :func:`rag_judge.evaluate`: per-sample results, summary, tables."""

    def __init__(
        self,
        samples: Sequence[SampleResult],
        *,
        metrics: Sequence[str],
        model: str,
        ledger: Ledger,
    ) -> None:
        self.samples = list(samples)
        self.metrics = list(metrics)
        self.model = model
        self.ledger = ledger
        """Calls, tokens and cost of the whole run, each call counted once."""

    def __len__(self) -> int:
        return len(self.samples)

    def __repr__(self) -> str:
        lines = [f"EvaluationResult({len(self)} samples, model {self.model})"]
        for s in self.summary():
            mean = "—" if s.mean is None else f"{s.mean:.3f} [{s.ci_low:.3f}, {s.ci_high:.3f}]"
            lines.append(f"  {s.metric}: {mean} (n_scored={s.n_scored}/{s.n})")
        return "\n".join(lines)

    def values(self, metric: str) -> list[float]:
        """The scored values of one metric, in sample order."""
        return [
            r.value
            for s in self.samples
            if (r := s.results.get(metric)) is not None and r.value is not None
        ]

    def summary(
        self, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
    ) -> list[MetricSummary]:
        """Per metric: mean, percentile-bootstrap CI, n_scored and status counts."""
        out = []
        options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
        for metric in self.metrics:
            results = [s.results[metric] for s in self.samples if metric in s.results]
            statuses = Counter(r.status for r in results)
            groups = [
                [r.value for r in s.repeats[metric] if r.value is not None]
                if metric in s.repeats
                else ([] if s.results[metric].value is None else [s.results[metric].value])
                for s in self.samples
                if metric in s.results
            ]
            scored = [[float(v) for v in g if v is not None] for g in groups if g]
            mean = low = high = spread = None
            if scored and any(len(g) > 1 for g in scored):
                ci = two_level_bootstrap_ci(scored, **options)  # type: ignore[arg-type]
                found = within_spread(scored)
                spread = None if found is None else found.sd
                mean, low, high = ci.estimate, ci.low, ci.high
            elif scored:
                ci = bootstrap_mean_ci([g[0] for g in scored], **options)  # type: ignore[arg-type]
                mean, low, high = ci.estimate, ci.low, ci.high
            out.append(
                MetricSummary(
                    metric=metric,
                    mean=mean,
                    ci_low=low,
                    ci_high=high,
                    n_scored=len(scored),
                    n=len(results),
                    statuses=dict(sorted(statuses.items())),
                    judge_sd=spread,
                )
            )
        return out + self._calibrated_summary(options)

    def _calibrated_summary(self, options: dict[str, Any]) -> list[MetricSummary]:
        """Per calibrated metric: the mean calibrated P(supported), and the share the profile
        calls supported, each with its interval; rows outside the profile counted by reason."""
        out = []
        for metric in dict.fromkeys(m for s in self.samples for m in s.calibrated):
            given = [s.calibrated[metric] for s in self.samples if metric in s.calibrated]
            probabilities = [c.probability for c in given if c.probability is not None]
            supported = [float(bool(c.supported)) for c in given if c.supported is not None]
            statuses = Counter("ok" if c.probability is not None else "uncalibrated" for c in given)
            for name, values in (("calibrated P(supported)", probabilities),
                                 ("calibrated share supported", supported)):  # fmt: skip
                ci = bootstrap_mean_ci(values, **options) if values else None
                out.append(
                    MetricSummary(
                        metric=f"{metric}: {name}",
                        mean=None if ci is None else ci.estimate,
                        ci_low=None if ci is None else ci.low,
                        ci_high=None if ci is None else ci.high,
                        n_scored=len(values),
                        n=len(given),
                        statuses=dict(sorted(statuses.items())),
                    )
                )
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-safe dict per sample: its fields and every judge result."""
        return [sample_record(s, model=self.model) for s in self.samples]

    def write_jsonl(self, path: str | Path) -> Path:
        """Write :meth:`to_records` as JSON Lines (UTF-8, one sample per line), atomically:
        the file is the old one or the whole new one, never a part."""
        return write_score_file(path, self.to_records(), write_lines=write_lines)

    def to_pandas(self) -> pd.DataFrame:
        """One row per sample × metric: value (nullable ``Float64``), status, cost, prompts."""
        import pandas as pd

        rows = [
            {
                "sample_id": s.sample.id,
                "metric": metric,
                "value": r.value,
                "status": r.status,
                "error": r.error,
                "n_claims": len(r.claims),
                "by_k": r.by_k,
                "calls": r.calls,
                "prompt_tokens": r.usage.prompt_tokens,
                "completion_tokens": r.usage.completion_tokens,
                "prompts": ",".join(r.prompts),
                "language": s.language,
            }
            for s in self.samples
            for metric, r in s.results.items()
        ]
        frame = pd.DataFrame(rows)
        # Nullable floats: an unscored row is <NA> (missing), never NaN; means skip it.
        frame["value"] = pd.Series([row["value"] for row in rows], dtype="Float64")
        return frame


def sample_record(s: SampleResult, *, model: str | None = None) -> dict[str, Any]:
    """One sample's JSON-safe record: its fields, how it was judged (by ``model``, when
    given), every judge result, and the calibrated values when a profile was applied."""
    return score_record(
        s.sample.model_dump(mode="json", exclude={"metadata"}),
        metadata=s.sample.metadata,
        language=s.language,
        prompt_language=s.prompt_language,
        judge_mode=s.judge_mode,
        judge_mode_note=s.judge_mode_note,
        repeats={m: [r.model_dump() for r in rs] for m, rs in s.repeats.items()},
        results={m: r.model_dump(mode="json") for m, r in s.results.items()},
        judge_model=model,
        calibrated={m: c.model_dump(mode="json") for m, c in s.calibrated.items()},
    )


def record_line(s: SampleResult) -> str:
    """:func:`sample_record` as one line of the score file."""
    return score_line(sample_record(s))
