"""Heuristic question-type labels, one rule set per language, for the manifests' breakdowns.

Shared by ``build.py`` and ``squad2.py``; the rule texts go into each manifest verbatim.
"""

from __future__ import annotations

import re

# First matching rule wins. "为什么" right after 称/成/作/视/认/改/名/分/译, or ending the
# question, is "called what" (称为+什么), not "why".
ZH_TYPE_RULES: tuple[tuple[str, str], ...] = (
    ("why", r"(?<![称成作视认改名分译])为什么(?![？?]?$)|为何|什么原因"),
    ("how", r"如何|怎么|怎样"),
    ("when", r"何时|什么时候|什么时间|哪一?年|哪一?天|几月|何年"),
    ("where", r"哪里|哪儿|何处|何地|什么地方"),
    ("who", r"谁|哪位|什么人"),
    ("which", r"哪"),
    ("number", r"多少|几|多[大长高久远重深宽]"),
    ("what", r"什么|何|啥"),
)
ZH_TYPE_RULE_TEXT = (
    "Heuristic, from the question text only; the first matching rule wins: why (为什么 not "
    "preceded by 称/成/作/视/认/改/名/分/译 and not ending the question, 为何, 什么原因); how "
    "(如何, 怎么, 怎样); when (何时, 什么时候, 什么时间, 哪年/哪一年, 哪天/哪一天, 几月, 何年); "
    "where (哪里, 哪儿, 何处, 何地, 什么地方); who (谁, 哪位, 什么人); which (any other 哪); "
    "number (多少, 几, 多+大/长/高/久/远/重/深/宽); what (什么, 何, 啥); else other. "
    "Not checked by hand: use it for breakdowns, not as ground truth."
)
EN_WH_WORDS = ("what", "how", "why", "which", "where", "who", "when")
EN_AUXILIARY = re.compile(
    r"is|are|was|were|do|does|did|has|have|had|can|can't|could|will|would|should|may|might|must"
)
EN_TYPE_RULE_TEXT = (
    "Heuristic, by question form: a wh-word (what, how, why, which, where, who, when) among the "
    "first two words gives that word ('to what extent' -> what); else a first word that is an "
    "auxiliary (is, are, was, were, do, does, did, has, have, had, can, can't, could, will, "
    "would, should, may, might, must) gives yes_no; else request (statements such as 'papers "
    "on ...'). Not checked by hand."
)


def zh_question_type(question: str) -> str:
    """The heuristic question type of a Chinese question (see ``ZH_TYPE_RULE_TEXT``)."""
    for label, pattern in ZH_TYPE_RULES:
        if re.search(pattern, question.strip()):
            return label
    return "other"


def en_question_type(question: str) -> str:
    """The heuristic question type of an English query (see ``EN_TYPE_RULE_TEXT``)."""
    words = question.lower().replace(",", " ").split()
    for word in words[:2]:
        if word in EN_WH_WORDS:
            return word
    return "yes_no" if words and EN_AUXILIARY.fullmatch(words[0]) else "request"
