"""A synth run written as an eval-set folder that ``rag-judge sweep SET_DIR`` runs as it is.

The corpus is the chunks themselves (each keeps its document as ``source`` and its offsets), and
the manifest's ``chunking`` is ``none``, so the sweep retrieves exactly the passages the
questions were written from and the qrels can name them: one per factual question, two per
multi-source question (joint recall asks for both), none for an unanswerable one. Every
rejected candidate goes to ``rejects.jsonl`` with the filter that dropped it. The folder is
written beside its target and renamed into place, so a run killed while writing leaves no half
set, and an existing folder with files in it is never written over.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.data.doc_folder import DocumentFolder
from rag_judge.data.eval_sets import QRELS_HEADER
from rag_judge.jobs.synth.job import SynthRun
from rag_judge.jobs.synth.options import SynthOptions
from rag_judge.synth.candidates import FILTERS, KINDS, Verdict
from rag_judge.synth.steps import PROMPTS

REJECTS_FILE = "rejects.jsonl"


def check_new_folder(folder: Path) -> None:
    """``folder`` does not exist or is empty, and its parent can take it (checked before any
    call, and again before writing)."""
    if folder.exists():
        if not folder.is_dir():
            raise InputError("is a file; give a folder for the new set", source=str(folder))
        if any(folder.iterdir()):
            raise InputError(
                "has files in it; give a new folder (nothing in it is written over)",
                source=str(folder),
            )
    parent = folder.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError("cannot create the set folder here", source=str(folder))


def write_set(
    folder: Path, run: SynthRun, source: DocumentFolder, documents_path: Path, options: SynthOptions
) -> dict[str, Any]:
    """Write the set into ``folder`` (new or empty) and return its manifest."""
    check_new_folder(folder)
    kept, rejected = run.kept, [v for v in run.verdicts if not v.kept]
    files = {
        "corpus.jsonl": _lines(
            {
                "doc_id": c.id,
                "title": c.title or "",
                "text": c.text,
                "source": c.doc_id,
                "start": c.start,
                "end": c.end,
            }
            for c in run.chunks
        ),
        "queries.jsonl": _lines(_query(v) for v in kept),
        "qrels.tsv": "\t".join(QRELS_HEADER)
        + "\n"
        + "".join(
            f"{v.candidate.id}\t{chunk}\t1\n"
            for v in kept
            if v.candidate.kind != "unanswerable"
            for chunk in v.candidate.chunk_ids
        ),
        REJECTS_FILE: _lines(_reject(v) for v in rejected),
        "LICENSE.md": (
            f"# Licence of {folder.name}\n\nThe passages are cut from the documents in "
            f"`{documents_path}`; their licence is theirs. The questions and answers were "
            f"written by {run.model} with `rag-judge synth`.\n"
        ),
    }
    manifest = _manifest(folder, run, source, documents_path, options)
    manifest["files"] = {
        name: {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
        for name, text in files.items()
    }
    files["manifest.json"] = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    _write_folder(folder, files)
    return manifest


def _query(verdict: Verdict) -> dict[str, Any]:
    c = verdict.candidate
    return {
        "query_id": c.id,
        "question": c.question,
        "answers": [c.answer] if c.answer else [],
        "type": c.kind,
        "answerable": c.kind != "unanswerable",
        "source_chunks": list(c.chunk_ids),
        "language": c.language,
        "prompt": c.prompt,
        "checks": verdict.figures,
    }


def _reject(verdict: Verdict) -> dict[str, Any]:
    c = verdict.candidate
    return {
        "id": c.id,
        "type": c.kind,
        "filter": verdict.rejected_by,
        "detail": verdict.detail,
        "question": c.question,
        "answer": c.answer,
        "source_chunks": list(c.chunk_ids),
        "checks": verdict.figures,
        "status": c.status,
        "error": c.error,
    }


def _manifest(
    folder: Path, run: SynthRun, source: DocumentFolder, documents_path: Path, options: SynthOptions
) -> dict[str, Any]:
    kept = run.kept
    types = Counter(v.candidate.kind for v in kept)
    languages = Counter(v.candidate.language for v in kept) or Counter([options.language or "en"])
    dropped = Counter((v.rejected_by, v.candidate.kind) for v in run.verdicts if not v.kept)
    thresholds = {
        "copies_chunk": options.max_overlap,
        "unsupported": options.support_threshold,
        "answerable_alone": options.support_threshold,
        "answered_by_top10": options.answered_threshold,
        "near_duplicate": options.duplicate_similarity,
    }
    return {
        "name": folder.name,
        "description": (
            f"Synthetic questions written by {run.model} from {len(source.documents)} documents "
            f"in {documents_path} ({len(run.chunks)} passages), kept by the filters in "
            "'synth'. Questions a model wrote are easier or harder than people's in ways that "
            "are measured, not assumed: see the manual's measurements "
            "(docs/measurements.md#how-far-synthetic-questions-can-be-trusted)."
        ),
        "source": f"rag-judge synth {documents_path}",
        "licence": "the documents' own (see LICENSE.md)",
        "language": languages.most_common(1)[0][0],
        "has_reference_answers": True,
        "not_applicable": [],
        "chunking": {"chunker": "none"},
        "relevance": (
            "binary by id: 1 = the passage a question was written from (both passages of a "
            "multi-source question); unanswerable questions have no relevant passage"
        ),
        "counts": {
            "documents": len(run.chunks),
            "queries": len(kept),
            "qrels": sum(
                len(v.candidate.chunk_ids) for v in kept if v.candidate.kind != "unanswerable"
            ),
            "types": {k: types[k] for k in KINDS},
        },
        "synth": {
            "documents": {
                "folder": str(documents_path),
                "files": len(source.files),
                "documents": len(source.documents),
                "skipped": source.skipped,
            },
            "model": run.model,
            "prompts": sorted({v.candidate.prompt for v in run.verdicts if v.candidate.prompt}),
            "prompt_ids": dict(PROMPTS),
            "seed": options.seed,
            "chunking": dict(options.chunking),
            "passages": len(run.chunks),
            "asked": run.quotas,
            "written": dict(Counter(v.candidate.kind for v in run.verdicts)),
            "kept": {k: types[k] for k in KINDS},
            "filters": {
                name: {
                    "rule": rule,
                    "threshold": thresholds.get(name),
                    "rejected": {k: dropped[(name, k)] for k in KINDS if dropped[(name, k)]},
                }
                for name, rule in FILTERS.items()
            },
            "notes": list(run.notes),
            "seconds": run.seconds,
        },
    }


def _lines(rows: Any) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _write_folder(folder: Path, files: Mapping[str, str]) -> None:
    """Every file into a temporary folder beside ``folder``, then one rename into place."""
    parent = folder.resolve().parent
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if folder.exists():
            folder.rmdir()  # empty, as checked: rename needs the name free
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
