"""Calibration: how far an LLM judge agrees with human labels, with confidence intervals.

Read judge output (:func:`read_judge_scores`) and human labels (:func:`read_human_labels`,
:func:`read_pairwise_labels`), join them by id with every leftover accounted for
(:func:`join_labels`), then measure agreement. Every statistic returns an :class:`Estimate`:
the point value with a percentile-bootstrap interval over rows (fixed seed), or None and the
reason when the data do not define it — never NaN.

Convention for binary labels: 1 = supported, 0 = unsupported (hallucinated); precision,
recall and F-beta are those of the unsupported class, the one a judge is meant to catch.

- agreement: :func:`accuracy`, :func:`balanced_accuracy`, :func:`negative_precision`,
  :func:`negative_recall`, :func:`negative_f_beta`, :func:`cohen_kappa` (also weighted),
  :func:`krippendorff_alpha`;
- correlation: :func:`pearson`, :func:`spearman`, :func:`kendall_tau_b`;
- probabilities: :func:`roc_auc`, :func:`brier_score`, :func:`expected_calibration_error`;
- thresholds: :func:`select_threshold` (dev split) and :func:`best_threshold`;
- the mean human label from few labels and many judge scores: :func:`ppi_mean`;
- pairwise preferences: :func:`pairwise_agreement`;
- people against each other: :func:`annotator_agreement`;
- which rows to label: :func:`sample_rows`; a ``rag-judge label`` file: :func:`read_label_log`;
- fitting the judge to labels: :func:`cross_validate_fit`, :func:`fit_judge`, and the profile
  ``score --calibration`` applies: :class:`CalibrationProfile`, :func:`read_profile`.
"""

from rag_judge.calibration.agreement import (
    KappaWeights,
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    negative_f_beta,
    negative_precision,
    negative_recall,
    predict_supported,
)
from rag_judge.calibration.alpha import AlphaLevel, krippendorff_alpha
from rag_judge.calibration.annotators import AnnotatorAgreement, annotator_agreement
from rag_judge.calibration.correlation import kendall_tau_b, pearson, spearman
from rag_judge.calibration.estimate import Estimate, Undefined, bootstrap_estimate
from rag_judge.calibration.fit import CrossValidation, FitRows, cross_validate_fit, fit_judge
from rag_judge.calibration.join import CalibrationRow, JoinedLabels, UnscoredRow, join_labels
from rag_judge.calibration.judge_scores import (
    ClaimScore,
    JudgeRow,
    JudgeScores,
    judge_scores_from_records,
    read_judge_scores,
)
from rag_judge.calibration.label_log import LabelLog, read_label_log
from rag_judge.calibration.labels import (
    ExcludedLabel,
    HumanLabel,
    HumanLabels,
    LabelKind,
    LabelLevel,
    PairwisePreference,
    human_labels_from_records,
    read_human_labels,
    read_pairwise_labels,
)
from rag_judge.calibration.pairwise import (
    PairwiseAgreement,
    SkippedPair,
    judge_preference,
    pairwise_agreement,
)
from rag_judge.calibration.ppi import PpiResult, ppi_mean
from rag_judge.calibration.probability import (
    CalibrationError,
    ReliabilityBin,
    brier_score,
    expected_calibration_error,
    roc_auc,
)
from rag_judge.calibration.profile import CalibrationProfile, read_profile
from rag_judge.calibration.sampling import sample_rows
from rag_judge.calibration.thresholds import (
    Objective,
    ThresholdChoice,
    ThresholdSelection,
    best_threshold,
    select_threshold,
    stratified_split,
)

__all__ = [
    "AlphaLevel",
    "AnnotatorAgreement",
    "CalibrationError",
    "CalibrationProfile",
    "CalibrationRow",
    "ClaimScore",
    "CrossValidation",
    "Estimate",
    "ExcludedLabel",
    "FitRows",
    "HumanLabel",
    "HumanLabels",
    "JoinedLabels",
    "JudgeRow",
    "JudgeScores",
    "KappaWeights",
    "LabelKind",
    "LabelLevel",
    "LabelLog",
    "Objective",
    "PairwiseAgreement",
    "PairwisePreference",
    "PpiResult",
    "ReliabilityBin",
    "SkippedPair",
    "ThresholdChoice",
    "ThresholdSelection",
    "Undefined",
    "UnscoredRow",
    "accuracy",
    "annotator_agreement",
    "balanced_accuracy",
    "best_threshold",
    "bootstrap_estimate",
    "brier_score",
    "cohen_kappa",
    "cross_validate_fit",
    "expected_calibration_error",
    "fit_judge",
    "human_labels_from_records",
    "join_labels",
    "judge_preference",
    "judge_scores_from_records",
    "kendall_tau_b",
    "krippendorff_alpha",
    "negative_f_beta",
    "negative_precision",
    "negative_recall",
    "pairwise_agreement",
    "pearson",
    "ppi_mean",
    "predict_supported",
    "read_human_labels",
    "read_judge_scores",
    "read_label_log",
    "read_pairwise_labels",
    "read_profile",
    "roc_auc",
    "sample_rows",
    "select_threshold",
    "spearman",
    "stratified_split",
]
