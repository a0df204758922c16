"""A small score file to label: five judged rows (one unscored), one whose text is markup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

XSS = "<script>alert(1)</script> and <img src=x onerror=\"document.title='pwned'\">"
"""An answer that a page rendering text as HTML would run."""


def claim(text: str, verdict: str, p: float, chunks: list[int], reason: str) -> dict[str, Any]:
    return {
        "claim": text,
        "verdict": verdict,
        "chunks": chunks,
        "reason": reason,
        "support_probability": p,
    }


def row(id_: str, answer: str, value: float | None, claims: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "metric": "faithfulness",
        "value": value,
        "status": "ok" if value is not None else "parse_error",
        "error": None if value is not None else "no JSON in the reply",
        "claims": claims,
    }
    return {
        "id": id_,
        "question": f"Question of {id_}?",
        "contexts": [f"First passage of {id_}.", f"Second passage of {id_}, cited."],
        "answer": answer,
        "results": {"faithfulness": result},
    }


ROWS = [
    row(
        "r1",
        "Paris is the capital of France.",
        0.9,
        [
            claim("Paris is the capital of France.", "supported", 0.9, [2], "Passage 2 says so."),
        ],
    ),
    row(
        "r2",
        XSS,
        0.2,
        [
            claim(XSS, "not_mentioned", 0.2, [], "<b>bold</b> reason"),
        ],
    ),
    row("r3", "It rained twice.", None, []),
    row(
        "r4",
        "Two claims here. And another.",
        0.5,
        [
            claim("Two claims here.", "supported", 0.8, [1], "First passage."),
            claim("And another.", "contradicted", 0.2, [1, 2], "Both passages deny it."),
        ],
    ),
    row(
        "r5",
        "The last answer.",
        0.6,
        [
            claim("The last answer.", "supported", 0.6, [1], "Said in passage 1."),
        ],
    ),
]
"""In file order; r3 is unscored, so a session without --sample offers r1, r2, r4, r5."""


def write_scores(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path
