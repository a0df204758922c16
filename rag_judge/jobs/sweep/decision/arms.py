"""What the decision compares, by name: the ks of a k-sweep, or the arms of a configuration sweep.

The rule (:mod:`.recommend`) compares numbered columns. In a k-sweep the number is k itself; in a
configuration sweep each column is an arm, a (configuration, k) pair, numbered 1..N in grid order.
:class:`ArmNames` turns a column's number into the words the decision's sentences use, so one
rule and one record serve both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arm:
    """One column of a configuration sweep: a configuration at one k."""

    configuration: str
    """The configuration's name, e.g. ``retriever=dense`` or ``retriever=bm25,rerank=llm``."""
    k: int

    @property
    def label(self) -> str:
        """``retriever=dense at k=3``."""
        return f"{self.configuration} at k={self.k}"


@dataclass(frozen=True)
class ArmNames:
    """How the decision names its columns: ``k=3`` in a k-sweep (no arms), ``retriever=dense at
    k=3`` in a configuration sweep.

    >>> ArmNames().one(3), ArmNames().many([1, 2]), ArmNames().noun
    ('k=3', 'k = 1, 2', 'k')
    >>> names = ArmNames({1: Arm("retriever=bm25", 1), 2: Arm("retriever=dense", 1)})
    >>> names.one(2), names.many([1, 2]), names.noun
    ('retriever=dense at k=1', 'retriever=bm25 at k=1; retriever=dense at k=1', 'arm')
    """

    arms: Mapping[int, Arm] = field(default_factory=dict)

    @property
    def noun(self) -> str:
        """What one column is called in a sentence: ``k`` or ``arm``."""
        return "arm" if self.arms else "k"

    @property
    def nouns(self) -> str:
        """Its plural: ``ks`` or ``arms``."""
        return self.noun + "s"

    def one(self, key: int) -> str:
        """One column by name."""
        return self.arms[key].label if self.arms else f"k={key}"

    def many(self, keys: Sequence[int]) -> str:
        """Several columns by name, as a list."""
        if self.arms:
            return "; ".join(self.one(key) for key in keys)
        return "k = " + ", ".join(str(key) for key in keys)

    def as_json(self, key: int) -> dict[str, object]:
        """A column's own fields in ``decision.json``: its configuration and k (nothing in a
        k-sweep, whose column is k)."""
        if not self.arms:
            return {}
        arm = self.arms[key]
        return {"arm": key, "configuration": arm.configuration, "k": arm.k}
