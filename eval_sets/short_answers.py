"""Build ``cmrc_short_answers``: short answers, right and wrong, for the judges that read them.

Each chosen CMRC 2018 dev question gives two rows with the same question and contexts: its
reference span (label 1) and one wrong answer (label 0) of one kind:

- ``sibling``: another question's answer from the same paragraph (a true span of the passage
  that answers something else);
- ``number``: the reference with one digit (or one Chinese numeral) changed, to a value no
  context states;
- ``mixed``: a reference that mixes Han with Latin letters (``光荣和ω-force``), wrong by its Latin
  word swapped for one from another paragraph that no context contains.

A question goes to the first kind it fits (mixed, number, sibling), so no question is in two.
The contexts are the question's paragraph and two distractor chunks (BM25 over character
bigrams, from other paragraphs cut into 100-200 character sentence windows, none containing a
reference answer), the paragraph at a seeded position. Every choice is seeded by a sha256 of
the question id, so the build is byte-for-byte reproducible. Rows carry ``split`` (``tune`` or
``held_out`` by the parity of the question id's sha256): fit on one, report on the other.

Called by ``eval_sets/build.py --only cmrc_short_answers``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rag_judge.judges.numbers import Quantity, normalised, quantities, unstated
from rag_judge.pipeline.bm25 import tokenize
from rag_judge.pipeline.chunking import structure_aware

Row = dict[str, Any]
NAME = "cmrc_short_answers"
PER_KIND = 80
"""Questions per kind (mixed has fewer eligible: all are kept)."""
DISTRACTORS = 2
KINDS = ("mixed", "number", "sibling")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN_RUN = re.compile(r"[A-Za-z]{2,}")
_ZH_DIGITS = "一二三四五六七八九"


def seeded(*parts: str) -> int:
    """A reproducible pseudo-random integer from the parts (sha256)."""
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest(), 16)


def split_of(question_id: str) -> str:
    """``tune`` or ``held_out``, by the parity of the id's sha256."""
    return "tune" if seeded(question_id) % 2 == 0 else "held_out"


def build_short_answers(source: Path, licence: str) -> tuple[dict[str, str], Row]:
    """The set's files and manifest (without ``files``) from CMRC 2018 dev."""
    data = json.loads((source / "raw" / "cmrc2018_dev.json").read_text(encoding="utf-8"))
    paragraphs = [p for entry in data["data"] for p in entry["paragraphs"]]
    index = _ChunkIndex(paragraphs)
    latin_pool = sorted({w for p in paragraphs for w in re.findall(r"[A-Za-z]{4,}", p["context"])})
    skipped: Counter[str] = Counter()
    candidates: dict[str, list[tuple[int, Row, Row]]] = {kind: [] for kind in KINDS}
    for order, paragraph in enumerate(paragraphs):
        for qa in paragraph["qas"]:
            question = _question(qa, paragraph, skipped)
            if question is None:
                continue
            contexts = index.contexts(paragraph, question)
            for kind in KINDS:
                wrong = _wrong(kind, question, paragraph, contexts, latin_pool)
                if wrong is not None:
                    candidates[kind].append((order, question | {"contexts": contexts}, wrong))
                    break
            else:
                skipped["no wrong answer of any kind"] += 1
    chosen = []
    for kind in KINDS:
        ranked = sorted(candidates[kind], key=lambda c: seeded("pick", c[1]["id"]))
        chosen += [(order, kind, q, wrong) for order, q, wrong in ranked[:PER_KIND]]
    chosen.sort(key=lambda c: (c[0], c[2]["id"]))
    samples, labels = [], []
    for _, kind, question, wrong in chosen:
        for label, answer in ((1, question["positive"]), (0, wrong)):
            row_id = f"{question['id']}-{'right' if label else kind}"
            samples.append(_sample(row_id, question, answer["text"], kind, answer["how"]))
            labels.append({"id": row_id, "label": label, "label_kind": "binary",
                           "source_label": "right" if label else f"wrong:{kind}"})  # fmt: skip
    files = {
        "samples.jsonl": _jsonl(samples),
        "labels.jsonl": _jsonl(labels),
        "LICENSE.md": licence,
    }
    return files, _manifest(samples, labels, candidates, skipped)


def _question(qa: Row, paragraph: Row, skipped: Counter[str]) -> Row | None:
    """The question with its references, or None (counted) when its first reference is not a
    span of its paragraph."""
    references = list(dict.fromkeys(a["text"].strip() for a in qa["answers"] if a["text"].strip()))
    context = paragraph["context"]
    if not references or references[0] not in context:
        skipped["first reference not verbatim in its paragraph"] += 1
        return None
    alternatives = [r for r in references[1:] if r in context]
    return {
        "id": qa["id"],
        "question": qa["question"].strip(),
        "references": references,
        "positive": {"text": references[0], "how": "first reference"},
        "alternative": alternatives[0] if alternatives else None,
    }


def _wrong(
    kind: str, question: Row, paragraph: Row, contexts: list[str], latin_pool: list[str]
) -> Row | None:
    reference = question["references"][0]
    if kind == "mixed":
        return _swap_latin(question, reference, contexts, latin_pool)
    if kind == "number":
        return _change_number(question, reference, contexts)
    siblings = [
        other
        for qa in paragraph["qas"]
        if qa["id"] != question["id"]
        for other in [qa["answers"][0]["text"].strip()]
        if other and other in paragraph["context"] and _apart(other, question["references"])
    ]
    if not siblings:
        return None
    pick = siblings[seeded("sibling", question["id"]) % len(siblings)]
    if question["alternative"] is not None:  # the positive: another annotator's span if any
        question["positive"] = {"text": question["alternative"], "how": "another reference"}
    return {"text": pick, "how": "another question's answer in the same paragraph"}


def _apart(answer: str, references: list[str]) -> bool:
    """Neither contains the other, and they share under half their characters."""
    for reference in references:
        if answer in reference or reference in answer:
            return False
        shared = sum((Counter(answer) & Counter(reference)).values())
        if shared * 2 >= min(len(answer), len(reference)):
            return False
    return True


def _swap_latin(question: Row, reference: str, contexts: list[str], pool: list[str]) -> Row | None:
    if not _HAN.search(reference) or not (runs := list(_LATIN_RUN.finditer(reference))):
        return None
    run = max(runs, key=lambda m: (len(m.group()), -m.start()))
    everything = "\n".join(contexts).lower()
    choices = [w for w in pool if w.lower() not in everything and w.lower() != run.group().lower()]
    word = choices[seeded("latin", question["id"]) % len(choices)]
    text = reference[: run.start()] + word + reference[run.end() :]
    return {"text": text, "how": f"Latin word {run.group()!r} replaced by {word!r}"}


def _change_number(question: Row, reference: str, contexts: list[str]) -> Row | None:
    if normalised(reference) != reference or not (found := quantities(reference)):
        return None
    key = question["id"]
    for q in sorted(found, key=lambda q: seeded("which", key, str(q.start))):
        for text in _digit_changes(reference, q, key):
            if unstated(quantities(text), *contexts):
                return {"text": text, "how": f"{q.text!r} changed"}
    return None


def _digit_changes(text: str, q: Quantity, key: str) -> Iterable[str]:
    """The text with one digit of ``q`` changed, in seeded order."""
    positions = [i for i in range(q.start, q.end) if text[i].isdigit() or text[i] in _ZH_DIGITS]
    positions.sort(key=lambda i: seeded("where", key, str(i)))
    for i in positions:
        alphabet = "0123456789" if text[i].isdigit() else _ZH_DIGITS
        options = [d for d in alphabet if d != text[i] and not (d == "0" and i == q.start)]
        options.sort(key=lambda d: seeded("digit", key, str(i), d))
        for digit in options:
            yield text[:i] + digit + text[i + 1 :]


class _ChunkIndex:
    """Every paragraph cut into sentence windows, scored by BM25 over character bigrams."""

    def __init__(self, paragraphs: list[Row]) -> None:
        chunker = structure_aware(100, 200)
        self.chunks = [
            (p["id"], c.text) for p in paragraphs for c in chunker(p["id"], p["context"])
        ]
        self.tokens = [Counter(tokenize(text, zh_tokenizer="bigram")) for _, text in self.chunks]
        self.frequency: Counter[str] = Counter(t for tokens in self.tokens for t in tokens)
        self.average = sum(sum(t.values()) for t in self.tokens) / len(self.tokens)

    def contexts(self, paragraph: Row, question: Row) -> list[str]:
        """The paragraph and the best distractors, the paragraph at a seeded position."""
        query = tokenize(question["question"], zh_tokenizer="bigram")
        ranked = sorted(range(len(self.chunks)), key=lambda i: (-self._score(query, i), i))
        picked: list[str] = []
        for i in ranked:
            owner, text = self.chunks[i]
            if owner != paragraph["id"] and not any(r in text for r in question["references"]):
                picked.append(text)
            if len(picked) == DISTRACTORS:
                break
        at = seeded("position", question["id"]) % (DISTRACTORS + 1)
        return [*picked[:at], paragraph["context"], *picked[at:]]

    def _score(self, query: list[str], i: int) -> float:
        tokens, n = self.tokens[i], len(self.tokens)
        length = sum(tokens.values())
        score = 0.0
        for term in set(query):
            if term in tokens:
                idf = math.log(1 + (n - self.frequency[term] + 0.5) / (self.frequency[term] + 0.5))
                tf = tokens[term]
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / self.average))
        return score


def _sample(row_id: str, question: Row, answer: str, kind: str, how: str) -> Row:
    return {
        "id": row_id,
        "question": question["question"],
        "contexts": question["contexts"],
        "answer": answer,
        "reference": question["references"][0],
        "references": question["references"][1:],
        "language": "zh",
        "metadata": {"kind": kind, "split": split_of(question["id"]), "cmrc_id": question["id"],
                     "answer_from": how},
    }  # fmt: skip


def _jsonl(rows: Iterable[Row]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _manifest(
    samples: list[Row], labels: list[Row], candidates: dict[str, list[Any]], skipped: Counter[str]
) -> Row:
    by_kind = Counter(s["metadata"]["kind"] for s in samples)
    by_split = Counter(s["metadata"]["split"] for s in samples)
    return {
        "name": NAME,
        "description": (
            "Short answers to CMRC 2018 dev questions, right and wrong, for the judges and "
            "reference-match metrics: each question gives its reference span (label 1) and one "
            "wrong answer (label 0): a sibling span (another question's answer from the same "
            "paragraph), the reference with one number changed to a value no context states, "
            "or a mixed-script reference (Han with Latin letters) with its Latin word swapped. "
            "Contexts: the question's paragraph and two BM25 distractor chunks."
        ),
        "source": "CMRC 2018 dev (see LICENSE.md); built by eval_sets/build.py --only " + NAME,
        "licence": "CC BY-SA 4.0 (CMRC 2018, Cui et al., EMNLP-IJCNLP 2019), see LICENSE.md",
        "language": "zh",
        "label_kind": "binary",
        "label_mapping": {
            "binary": "right -> 1; wrong:sibling, wrong:number, wrong:mixed -> 0",
            "rule": (
                "1 when the answer is a reference span of the question (another annotator's "
                "span for the sibling kind when one differs), so it is both supported by the "
                "contexts as the answer to the question and complete against the reference."
            ),
        },
        "calibrates": [
            {"metric": m, "how": "compare with the binary label per kind (metadata.kind)"}
            for m in ("faithfulness", "completeness", "exact_match", "answer_f1")
        ],
        "construction": {
            "kinds": "a question goes to the first kind it fits: mixed, number, sibling",
            "per_kind": f"at most {PER_KIND} questions, chosen by sha256 of the question id",
            "number": (
                "one digit (or Chinese numeral) of one number in the reference changed, in seeded "
                "order, to the first value no context states (numbers read as values by "
                "rag_judge.judges.numbers): a wrong number stated elsewhere in the passages is "
                "a sibling fact, not what this kind measures"
            ),
            "mixed": "the reference's longest Latin run replaced by a Latin word (4+ letters) "
            "from another paragraph that no context contains",
            "contexts": f"the paragraph and {DISTRACTORS} distractor chunks (structure_aware "
            "100-200 characters, BM25 k1=1.2 b=0.75 over character bigrams, other paragraphs, "
            "no reference answer inside), the paragraph at position sha256 % 3",
            "split": "metadata.split: tune or held_out by the parity of sha256(question id)",
        },
        "counts": {
            "samples": len(samples),
            "labels": dict(sorted(Counter(str(x["label"]) for x in labels).items())),
            "by_kind": dict(sorted(by_kind.items())),
            "by_split": dict(sorted(by_split.items())),
            "eligible_questions": {k: len(v) for k, v in candidates.items()},
            "skipped_questions": dict(sorted(skipped.items())),
        },
    }
