"""Human-labelled calibration sets: rows the judges can score, and the label a human gave each.

A set is a folder ``<name>/`` with:

- ``samples.jsonl``: one row to judge per line, in :func:`rag_judge.data.samples.load_samples`'s
  format with our column names: ``id``, ``answer`` (the text being judged), and optionally
  ``question``, ``contexts`` (list of passages), ``reference``, ``language``, ``metadata``
  (an object). An absent field means the source has none.
- ``labels.jsonl``: one line per sample: ``id``, ``label``, ``label_kind`` and
  ``source_label`` (the label exactly as the source gives it). ``label`` depends on the kind:
  ``binary`` 0 or 1, ``ordinal`` an integer (higher is better), ``nominal`` a class name; it is
  ``null`` when the source label has no place on that scale (BEGIN's ``Generic``).
- ``manifest.json``: ``name``, ``description``, ``source``, ``licence``, ``label_kind``,
  ``label_mapping``, ``counts`` (``labels``: ``{label or "null": n}``), notes on what was
  excluded and why, and ``files`` (``{name: {sha256, fields}}``), which lists every file but
  ``LICENSE.md``, including the verbatim copies of the source's licence files.
- ``LICENSE.md``.

The bundled sets live beside the retrieval sets (``eval_sets/`` in a checkout,
``rag_judge/_eval_sets`` in a wheel) and are written by ``eval_sets/build_calibration.py``:
``wice_dev`` (claims vs the web pages they cite, binary support), ``begin_dev`` (dialogue
responses vs a knowledge snippet, binary attribution) and ``alce_utility`` (answers rated 1-5
for usefulness, ordinal). Loading checks every file against its manifest sha256 and every
line; errors are :class:`~rag_judge.core.errors.InputError` naming the file, line and field.

>>> begin = load_calibration_set("begin_dev")
>>> len(begin.samples), begin.label_kind, begin.label_counts()
(1229, 'binary', {'0': 835, '1': 313, 'null': 81})
>>> small = begin.limit(3)
>>> [(s.id, small.labels[s.id]) for s in small.samples]
[('cmu-001', 0), ('tc-001', 1), ('cmu-003', None)]
>>> small.source_labels["cmu-003"]
'Generic'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, get_args

from rag_judge.core.errors import InputError
from rag_judge.core.types import RagSample
from rag_judge.data.eval_sets import bundled_root
from rag_judge.data.readers import Where, read_jsonl
from rag_judge.data.set_folders import (
    bad,
    complete_folders,
    read_manifest,
    resolve_folder,
    unique,
    verify_files,
)

LabelKind = Literal["binary", "ordinal", "nominal"]
"""``binary``: 0/1; ``ordinal``: an integer scale, higher is better; ``nominal``: class names."""
Label = int | str | None
"""A human label on the set's scale; None when the source label has no place on it."""

SAMPLES_FILE = "samples.jsonl"
LABELS_FILE = "labels.jsonl"
DATA_FILES = (SAMPLES_FILE, LABELS_FILE)
"""The files every calibration set has besides ``manifest.json`` and ``LICENSE.md``."""
_SAMPLE_KEYS = (
    "id", "question", "contexts", "answer", "reference", "references", "language", "metadata",
)  # fmt: skip
_LABEL_KEYS = ("id", "label", "label_kind", "source_label")
_MODIFIED = (
    "the file was modified; rebuild with eval_sets/build_calibration.py or update the manifest"
)


@dataclass(frozen=True)
class CalibrationSet:
    """A loaded calibration set: rows to judge, their human labels, and the manifest."""

    name: str
    path: Path
    manifest: Mapping[str, Any]
    label_kind: LabelKind
    samples: tuple[RagSample, ...]
    """Rows to judge, in file order."""
    labels: Mapping[str, Label]
    """``{sample id: label}`` for every sample (None: no place on the scale)."""
    source_labels: Mapping[str, str | int]
    """``{sample id: label as the source gives it}`` (e.g. WiCE's 3-way label)."""

    def label_counts(self) -> dict[str, int]:
        """``{label: n}`` over the samples, labels as strings (None as ``"null"``), sorted."""
        counts: dict[str, int] = {}
        for sample in self.samples:
            label = self.labels[sample.id]
            key = "null" if label is None else str(label)
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def limit(self, n: int) -> CalibrationSet:
        """At most ``n`` samples, taken round-robin over the label values.

        One stratum per label value, each in file order, the strata ordered highest label
        first (1 before 0, 5 before 1; nominal labels alphabetically) and unlabelled (None)
        last. Round r takes the r-th sample of every stratum that still has one, until ``n``
        are taken; the samples kept stay in file order. So ``limit(2)`` of a binary set
        holds one 1 and one 0, every label value appears once ``n`` reaches the number of
        values, and ``limit(n)`` contains ``limit(n - 1)``. Balanced, not proportional: use
        the whole set for prevalence-dependent figures (accuracy, precision).

        Raises:
            InputError: ``n`` is less than 1.
        """
        if n < 1:
            raise InputError(f"must be at least 1, got {n}", field="limit")
        strata: dict[Label, list[int]] = {}
        for position, sample in enumerate(self.samples):
            strata.setdefault(self.labels[sample.id], []).append(position)
        ordered = [strata[label] for label in sorted(strata, key=_stratum_order)]
        taken = [p for layer in zip_longest(*ordered) for p in layer if p is not None][:n]
        samples = tuple(self.samples[p] for p in sorted(taken))
        ids = {s.id for s in samples}
        return replace(
            self,
            samples=samples,
            labels=MappingProxyType({i: v for i, v in self.labels.items() if i in ids}),
            source_labels=MappingProxyType(
                {i: v for i, v in self.source_labels.items() if i in ids}
            ),
        )


def _stratum_order(label: Label) -> tuple[bool, int, str]:
    """Sort key: numbers descending, strings ascending, None last."""
    if isinstance(label, int):
        return (False, -label, "")
    return (label is None, 0, label or "")


def available_calibration_sets() -> list[str]:
    """Names of the bundled calibration sets (folders with a manifest, samples and labels)."""
    return complete_folders(bundled_root(), DATA_FILES)


def load_calibration_set(name_or_path: str | Path) -> CalibrationSet:
    """Load a bundled set by name (``"wice_dev"``) or a set folder by path, checked.

    Raises:
        InputError: Unknown name, a file missing or modified (sha256 mismatch), or a bad
            line; the message names the file, line and field.
    """
    folder = _resolve(name_or_path)
    manifest = _read_manifest(folder)
    _verify_files(folder, manifest)
    kind: LabelKind = manifest["label_kind"]
    samples = _read_samples(folder / SAMPLES_FILE)
    labels, source_labels = _read_labels(folder / LABELS_FILE, kind, [s.id for s in samples])
    name = manifest.get("name")
    return CalibrationSet(
        name=name if isinstance(name, str) and name else folder.name,
        path=folder,
        manifest=MappingProxyType(manifest),
        label_kind=kind,
        samples=samples,
        labels=MappingProxyType(labels),
        source_labels=MappingProxyType(source_labels),
    )


def _resolve(name_or_path: str | Path) -> Path:
    return resolve_folder(
        name_or_path,
        bundled=bundled_root(),
        available=available_calibration_sets(),
        kind="calibration set",
    )


def _read_manifest(folder: Path) -> dict[str, Any]:
    manifest = read_manifest(folder, kind="calibration set")
    if manifest.get("label_kind") not in get_args(LabelKind):
        kinds = ", ".join(get_args(LabelKind))
        got = manifest.get("label_kind")
        raise bad(f"must be one of {kinds}, got {got!r}", folder / "manifest.json", "label_kind")
    return manifest


def _verify_files(folder: Path, manifest: Mapping[str, Any]) -> None:
    """The data files are listed, and every listed file exists and matches its sha256."""
    verify_files(folder, manifest, required=DATA_FILES, modified=_MODIFIED, sha256_required=True)


def _string(row: Mapping[str, Any], key: str, where: Where, *, optional: bool = False) -> Any:
    """The non-blank string ``row[key]``; None if ``optional`` and absent or null."""
    value = row.get(key)
    if value is None and optional:
        return None
    if key not in row:
        raise bad("missing", where, key)
    if not isinstance(value, str):
        raise bad(f"must be a string, got {_type(value)}", where, key)
    if not value.strip():
        raise bad("must not be blank (leave the field out instead)", where, key)
    return value


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _contexts(row: Mapping[str, Any], where: Where) -> tuple[str, ...] | None:
    value = row.get("contexts")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise bad("must be a list of strings", where, "contexts")
    return tuple(value)


def _references(row: Mapping[str, Any], where: Where) -> tuple[str, ...]:
    value = row.get("references", [])
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise bad("must be a list of non-blank strings", where, "references")
    return tuple(value)


def _read_samples(path: Path) -> tuple[RagSample, ...]:
    seen: dict[str, Where] = {}
    samples = []
    for where, row in read_jsonl(path, allowed=_SAMPLE_KEYS):
        sample_id = _string(row, "id", where)
        unique(seen, sample_id, where, "id")
        metadata = row.get("metadata", {})
        if not isinstance(metadata, dict):
            raise bad(f"must be an object, got {_type(metadata)}", where, "metadata")
        samples.append(
            RagSample(
                id=sample_id,
                question=_string(row, "question", where, optional=True),
                contexts=_contexts(row, where),
                answer=_string(row, "answer", where),
                reference=_string(row, "reference", where, optional=True),
                references=_references(row, where),
                language=_string(row, "language", where, optional=True),
                metadata=metadata,
            )
        )
    if not samples:
        raise bad("no samples", path)
    return tuple(samples)


def _label(row: Mapping[str, Any], kind: LabelKind, where: Where) -> Label:
    if "label" not in row:
        raise bad("missing (null when the source label has no place on the scale)", where, "label")
    value = row["label"]
    if value is None:
        return None
    if kind == "nominal":
        if isinstance(value, str) and value.strip():
            return value
        raise bad(f"a nominal label must be a non-blank string, got {value!r}", where, "label")
    if type(value) is not int or (kind == "binary" and value not in (0, 1)):
        expected = "0, 1" if kind == "binary" else "an integer"
        raise bad(f"a {kind} label must be {expected} or null, got {value!r}", where, "label")
    return value


def _source_label(row: Mapping[str, Any], where: Where) -> str | int:
    value = row.get("source_label")
    if "source_label" not in row:
        raise bad("missing", where, "source_label")
    if type(value) is not int and not isinstance(value, str):
        raise bad(f"must be a string or an integer, got {_type(value)}", where, "source_label")
    return value


def _read_labels(
    path: Path, kind: LabelKind, sample_ids: list[str]
) -> tuple[dict[str, Label], dict[str, str | int]]:
    """Every sample's label, in sample order; labels for unknown ids are errors."""
    known = set(sample_ids)
    seen: dict[str, Where] = {}
    labels: dict[str, Label] = {}
    source: dict[str, str | int] = {}
    for where, row in read_jsonl(path, allowed=_LABEL_KEYS):
        label_id = _string(row, "id", where)
        unique(seen, label_id, where, "id")
        if label_id not in known:
            raise bad(f"no sample '{label_id}' in {SAMPLES_FILE}", where, "id")
        if row.get("label_kind") != kind:
            message = f"must be '{kind}' as in manifest.json, got {row.get('label_kind')!r}"
            raise bad(message, where, "label_kind")
        labels[label_id] = _label(row, kind, where)
        source[label_id] = _source_label(row, where)
    missing = [i for i in sample_ids if i not in labels]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise bad(f"no label for samples {', '.join(missing[:5])}{more}", path, "id")
    return {i: labels[i] for i in sample_ids}, {i: source[i] for i in sample_ids}
