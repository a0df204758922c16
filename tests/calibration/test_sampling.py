"""Which rows a person labels: seeded, scored rows only, each strategy as its docstring says."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rag_judge.calibration.sampling import bin_of, bin_quotas, sample_rows
from rag_judge.core.errors import InputError
from rag_judge.data.score_file import ClaimScore, JudgeRow


def row(id_: str, value: float | None, probability: float | None = None) -> JudgeRow:
    claims = () if probability is None else (ClaimScore(0, "c", "supported", probability),)
    status = "ok" if value is not None else "parse_error"
    return JudgeRow(id_, status, value, None, claims, None)


def rows_by_bin(sizes: list[int]) -> list[JudgeRow]:
    """``sizes[b]`` rows with values inside bin b of 5 (its middle)."""
    return [row(f"b{b}r{i}", (b + 0.5) / 5) for b, size in enumerate(sizes) for i in range(size)]


def test_random_is_a_seeded_sample_without_replacement() -> None:
    rows = [row(f"r{i}", i / 99) for i in range(100)]
    first = sample_rows(rows, 30, "random", seed=7)
    assert len(first) == len(set(first)) == 30
    assert sample_rows(rows, 30, "random", seed=7) == first
    assert sample_rows(rows, 30, "random", seed=8) != first


def test_unscored_rows_are_never_offered() -> None:
    rows = [row("a", 0.2), row("b", None), row("c", 0.9), row("d", None)]
    for strategy in ("random", "stratified", "uncertain"):
        assert sorted(sample_rows(rows, 10, strategy, seed=0)) == ["a", "c"]  # type: ignore[arg-type]


def test_a_sample_larger_than_the_population_is_all_rows() -> None:
    rows = [row(f"r{i}", i / 9) for i in range(10)]
    assert sorted(sample_rows(rows, 50, "random", seed=1)) == sorted(r.id for r in rows)


def test_stratified_takes_equal_numbers_per_bin() -> None:
    rows = rows_by_bin([40, 40, 40, 40, 40])
    picked = sample_rows(rows, 25, "stratified", seed=3)
    assert Counter(p[:2] for p in picked) == {f"b{b}": 5 for b in range(5)}


def test_stratified_spreads_a_small_bins_unused_share() -> None:
    # 30 rows over 5 bins is 6 each; bin 0 has 2 and bin 1 has 4, so 4 + 2 = 6 more go to the
    # three full bins: 8 each.
    rows = rows_by_bin([2, 4, 50, 50, 50])
    picked = sample_rows(rows, 30, "stratified", seed=0)
    assert Counter(p[:2] for p in picked) == {"b0": 2, "b1": 4, "b2": 8, "b3": 8, "b4": 8}


def test_stratified_order_is_shuffled_and_reproducible() -> None:
    rows = rows_by_bin([20, 20, 20, 20, 20])
    picked = sample_rows(rows, 20, "stratified", seed=5)
    assert picked == sample_rows(rows, 20, "stratified", seed=5)
    assert [p[:2] for p in picked] != sorted(p[:2] for p in picked)


def test_bin_quotas_hand_out_a_remainder_at_random_but_fairly() -> None:
    quotas = bin_quotas([10, 10, 10], 7, np.random.default_rng(0))
    assert sorted(quotas) == [2, 2, 3]
    assert bin_quotas([1, 0, 5], 6, np.random.default_rng(0)) == [1, 0, 5]


def test_the_edges_of_the_bins() -> None:
    assert [bin_of(v) for v in (0.0, 0.19999, 0.2, 0.99, 1.0)] == [0, 0, 1, 4, 4]


def test_uncertain_picks_the_rows_nearest_the_threshold_nearest_first() -> None:
    rows = [row("far", 0.0), row("near", 0.45), row("nearest", 0.51), row("high", 0.95)]
    assert sample_rows(rows, 2, "uncertain", seed=0) == ["nearest", "near"]
    assert sample_rows(rows, 1, "uncertain", seed=0, threshold=0.9) == ["high"]


def test_uncertain_reads_the_probability_before_the_value() -> None:
    rows = [row("value_near", 0.5, probability=0.99), row("probability_near", 1.0, 0.52)]
    assert sample_rows(rows, 1, "uncertain", seed=0) == ["probability_near"]


def test_uncertain_breaks_ties_with_the_seed() -> None:
    rows = [row(f"t{i}", 0.4 if i % 2 else 0.6) for i in range(20)]
    picks = {tuple(sample_rows(rows, 3, "uncertain", seed=s)) for s in range(10)}
    assert len(picks) > 1
    assert sample_rows(rows, 3, "uncertain", seed=4) == sample_rows(rows, 3, "uncertain", seed=4)


@pytest.mark.parametrize(
    ("n", "strategy", "threshold", "message"),
    [
        (0, "random", 0.5, "at least 1 row"),
        (-3, "random", 0.5, "at least 1 row"),
        (5, "greedy", 0.5, "unknown sampling strategy 'greedy'"),
        (5, "uncertain", 1.5, "threshold lies in"),
    ],
)
def test_bad_requests_are_refused(n: int, strategy: str, threshold: float, message: str) -> None:
    with pytest.raises(InputError, match=message):
        sample_rows([row("a", 0.5)], n, strategy, seed=0, threshold=threshold)  # type: ignore[arg-type]


def test_nothing_scored_is_refused() -> None:
    with pytest.raises(InputError, match="no row has a value"):
        sample_rows([row("a", None)], 5, "random", seed=0)
