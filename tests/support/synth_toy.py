"""A toy folder of documents and a scripted model for ``synth`` tests: no weights.

Six short documents (one per kind of file) each name a country's capital. The scripted model
writes, for the passage naming each capital, a question chosen to meet one filter (see
``FACTUAL``); it supports a claim when every capitalised word of it is in the passages shown,
unless the passage that names it calls it "disputed"; and it says an unanswerable question is
answered (the generator answers it) when it asks about Tokyo.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from rag_judge.backends.types import ChatRequest

DOCS = {
    "france.txt": "France is a country in Europe. Its capital is Paris.\n",
    "japan.txt": "Japan is an island country in Asia. Its capital is Tokyo.\n",
    "peru.md": "# Peru\n\nPeru is a country in South America. Its capital is Lima.\n",
    "kenya.html": (
        "<html><head><title>Kenya</title><script>alert(1)</script></head><body>"
        "<p>Kenya is a country in Africa.</p><p>Some say its capital is Nairobi; "
        "this is disputed.</p></body></html>"
    ),
    "more.jsonl": (
        json.dumps(
            {"id": "chile", "title": "Chile", "text": "Chile is long. Its capital is Santiago."}
        )
        + "\n"
        + json.dumps({"id": "egypt", "text": "Egypt lies on the Nile. Its capital is Cairo."})
        + "\n"
    ),
}
CAPITALS = ("Paris", "Tokyo", "Lima", "Nairobi", "Santiago", "Cairo")
FACTUAL = {
    "Paris": ("Which city is the seat of the French government?", "Paris"),  # kept
    "Tokyo": ("Japan is an island country in Asia; its capital is which?", "Tokyo"),  # copies
    "Lima": ("Which city is the seat of the Peruvian government?", "Cuzco"),  # not a span
    "Nairobi": ("Which city governs Kenya?", "Nairobi"),  # unsupported: disputed
    "Santiago": ("Which city is the seat of the French government today?", "Santiago"),  # dup
    "Cairo": ("What does the passage say is the capital of Egypt?", "Cairo"),  # refers
}
"""The factual question and answer written for the passage naming each capital."""
_PASSAGE = re.compile(r"\[\d+\] (.*?)(?=\n\[\d+\] |\Z)", re.DOTALL)


def write_docs(folder: Path) -> Path:
    """The toy documents, one file each, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def capital_in(text: str) -> str:
    return next(c for c in CAPITALS if c in text)


def supported(claim: str, passages: list[str]) -> bool:
    """Every capitalised word of ``claim`` is in a passage that does not call it disputed."""
    words = [w.strip(".,;?") for w in claim.split() if w[:1].isupper()]
    return all(any(w in p and "disputed" not in p for p in passages) for w in words)


def _between(text: str, tag: str) -> str:
    return text.split(f"<{tag}>")[1].split(f"</{tag}>")[0].strip()


def respond(request: ChatRequest) -> str | float:
    """The scripted model, by prompt id (see the module docstring)."""
    assert request.prompt_id is not None
    prompt, user = request.prompt_id.split(".")[0], request.messages[-1].content
    if prompt == "synth/factual":
        question, answer = FACTUAL[capital_in(_between(user, "passage"))]
        return json.dumps({"question": question, "answer": answer})
    if prompt == "synth/multi":
        first, second = (
            capital_in(_between(user, "passage1")),
            capital_in(_between(user, "passage2")),
        )
        answer = first if first == "Paris" else f"{first}; {second}"  # Paris: one suffices
        return json.dumps(
            {
                "question": f"Which capitals do {first}'s and {second}'s lands have?",
                "answer": answer,
            }
        )
    if prompt == "synth/unanswerable":
        city = capital_in(_between(user, "passage"))
        return json.dumps({"question": f"How many bridges cross the river in {city}?"})
    if prompt == "generate/answer":  # the generator: the first capital it is shown
        if "bridges" in user:  # an unanswerable question: only Tokyo's gets an answer
            return "Tokyo has many bridges." if "in Tokyo?" in user else "I do not know."
        found = [c for c in CAPITALS if c in user.split("<passages>")[-1]]
        return found[0] if found else "I do not know."
    if prompt == "claims/extract":  # a decline states nothing
        text = user.split("Text: ")[-1].strip()
        return json.dumps({"claims": [] if "do not know" in text else [text]})
    if prompt == "claims/verify":
        passages = [p.strip() for p in _PASSAGE.findall(user.split("Claims")[0])]
        claims = re.findall(r"^(\d+)\. (.*)$", user.split("Claims")[-1], re.MULTILINE)
        rows = [
            {
                "claim": int(n),
                "reason": "r",
                "verdict": "supported" if supported(text, passages) else "not_mentioned",
                "passages": [],
            }
            for n, text in claims
        ]
        return json.dumps({"verdicts": rows})
    raise AssertionError(f"unexpected prompt {prompt}")


_SYSTEM_MARKS = (
    ("Given two passages", "synth/multi"),
    ("that the passage does not answer", "synth/unanswerable"),
    ("You write test questions", "synth/factual"),
    ('"verdicts"', "claims/verify"),
    ('"claims"', "claims/extract"),
    ("answer this question using only the passages", "generate/answer"),
)


def synth_reply(body: dict) -> str:
    """:func:`respond` for a fake OpenAI server's request body, its prompt told by the system
    prompt (a server is sent no prompt id)."""
    from rag_judge.backends.types import ChatRequest, Message

    messages = tuple(Message(role=m["role"], content=str(m["content"])) for m in body["messages"])
    text = " ".join(m.content for m in messages).lower()
    prompt = next(p for mark, p in _SYSTEM_MARKS if mark.lower() in text)
    reply = respond(ChatRequest(messages=messages, prompt_id=f"{prompt}.en@1#0"))
    return str(reply)
