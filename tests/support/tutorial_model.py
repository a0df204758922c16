"""A lexical stand-in for a model, served by the fake OpenAI server, for the tutorials' runs.

The tutorials (docs/tutorials/) run end to end on bundled data, whose texts no scripted reply
can know in advance, so this model reads what it is sent, by the prompt its system message
shows, and answers from the words:

* it **answers** with the first sentence of the passage that shares most words with the
  question (``I don't know.`` when none shares any);
* it **judges** a claim supported when a passage holds at least 60% of the claim's words
  (characters, in Chinese), and extracts an answer as one claim (a refusal as none);
* it **writes questions** (``synth``) that name a passage's rarest words and answer with the
  passage's first words, copied, so its questions meet the span and copy filters.

Deterministic, and informative enough that the judge's value varies with the answer (a
calibration fit needs that), so the tutorials' figures are computed, not constant.
"""

from __future__ import annotations

import json
import re
from typing import Any

Body = dict[str, Any]

SUPPORT = 0.6
"""Share of a claim's words a passage must hold to support it."""
_WORD = re.compile(r"[\u4e00-\u9fff]|[^\W_]+", re.UNICODE)
_NUMBERED = re.compile(r"(?:^|\n)\[\d+\] ")
_CLAIM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_REFUSAL = ("don't know", "do not know", "不知道")


def words(text: str) -> list[str]:
    """Lower-cased words; a Han character is a word."""
    return [w.lower() for w in _WORD.findall(text)]


def coverage(claim: str, passage: str) -> float:
    """Share of the claim's distinct words found in the passage."""
    wanted = set(words(claim))
    return len(wanted & set(words(passage))) / len(wanted) if wanted else 0.0


def numbered(text: str) -> list[str]:
    """The ``[n] ...`` passages of a prompt (a passage may span lines)."""
    return [p.strip() for p in _NUMBERED.split(text)[1:]]


def _between(text: str, tag: str) -> str:
    return text.split(f"<{tag}>")[1].split(f"</{tag}>")[0].strip()


def _first_sentence(text: str, limit: int = 120) -> str:
    return _SENTENCE.split(text.strip(), maxsplit=1)[0][:limit].strip()


def answer(user: str) -> str:
    """The first sentence of the passage sharing most words with the question."""
    passages = numbered(_between(user, "passages"))
    question = user.split("</passages>")[-1]
    shared = [len(set(words(question)) & set(words(p))) for p in passages]
    if not passages or max(shared) == 0:
        return "我不知道。" if re.search(r"[\u4e00-\u9fff]", question) else "I don't know."
    return _first_sentence(passages[shared.index(max(shared))])


def verdicts(user: str) -> str:
    """Each numbered claim: supported by the passages holding 60% of its words."""
    marker = "Claims" if "Claims" in user else "陈述"
    head, _, tail = user.rpartition(marker)
    passages = numbered(head)
    rows = []
    for number, claim in _CLAIM.findall(tail):
        found = [i for i, p in enumerate(passages, 1) if coverage(claim, p) >= SUPPORT]
        rows.append(
            {
                "claim": int(number),
                "reason": f"[{found[0]}] holds its words" if found else "no passage mentions it",
                "verdict": "supported" if found else "not_mentioned",
                "passages": found,
            }
        )
    return json.dumps({"verdicts": rows}, ensure_ascii=False)


def claims(user: str) -> str:
    """The text as one claim; a refusal states nothing."""
    text = re.split(r"Text: |文本：", user)[-1].strip()
    refused = not text or any(r in text.lower() for r in _REFUSAL)
    return json.dumps({"claims": [] if refused else [text]}, ensure_ascii=False)


def _rare(passage: str, n: int = 2) -> str:
    """The passage's ``n`` longest words: what a question about it would name."""
    ranked = sorted(set(words(passage)), key=lambda w: (-len(w), w))
    return " ".join(ranked[:n])


def _span(passage: str, n: int = 4) -> str:
    """The passage's first ``n`` words, copied as they stand."""
    found = list(re.finditer(r"\S+", passage))[:n]
    return passage[found[0].start() : found[-1].end()] if found else passage


def synth(system: str, user: str) -> str:
    """A factual, two-part or unanswerable question on the passage(s) shown."""
    if "<passage1>" in user:
        first, second = _between(user, "passage1"), _between(user, "passage2")
        return json.dumps(
            {
                "question": f"What is reported on {_rare(first)} and on {_rare(second)}?",
                "answer": f"{_span(first)}; {_span(second)}",
            }
        )
    passage = _between(user, "passage")
    if '"answer"' not in system:  # unanswerable: a fact nobody wrote down
        return json.dumps({"question": f"Who paid for the research on {_rare(passage)}?"})
    return json.dumps(
        {"question": f"Which finding is reported about {_rare(passage)}?", "answer": _span(passage)}
    )


def tutorial_reply(body: Body) -> str:
    """The reply to one chat request, routed by what its system prompt asks for."""
    messages = body.get("messages") or [{"content": ""}]
    system, user = str(messages[0]["content"]), str(messages[-1]["content"])
    if '"verdicts"' in system:
        return verdicts(user)
    if "test questions" in system or "测试问题" in system:
        return synth(system, user)
    if '"claims"' in system:
        return claims(user)
    if '"questions"' in system:
        said = user.split("\n")[0].removeprefix("Answer: ").removeprefix("回答：")
        evasive = any(r in said.lower() for r in _REFUSAL)
        return json.dumps({"questions": [said] * 3, "noncommittal": evasive}, ensure_ascii=False)
    if "<passages>" in user:
        return answer(user)
    return "yes"
