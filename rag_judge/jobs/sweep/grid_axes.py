"""The grid of a configuration sweep: its axes, their values, and the configurations they make.

``--grid retriever=bm25,dense,hybrid --grid rerank=none,llm`` is two axes; every combination of
their values is one configuration, named by its values (``retriever=dense,rerank=llm``), in the
order the axes and values were given. Every value is checked here, when the grid is parsed,
before any index is built or any model is called. Each configuration is swept at every k of the
sweep, so an arm of the decision is a (configuration, k) pair.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from rag_judge.core.errors import InputError
from rag_judge.pipeline.build import RETRIEVERS, ChunkSize

PIPELINE_AXES: Final = ("retriever", "rerank", "chunk")
"""The built-in pipeline's axes."""
RAG_AXIS: Final = "rag"
"""Named RAGs of your own, each a configuration (``--rag`` specs, or objects from Python)."""
AXES: Final = (*PIPELINE_AXES, RAG_AXIS)
NO_RERANK: Final = "none"


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: a value per axis; what is not on the grid keeps the sweep's own
    option."""

    values: tuple[tuple[str, str], ...]
    """(axis, value) in the grid's axis order."""
    rag: object | None = None
    """The RAG object of a ``rag`` value given from Python (None: the value is its spec)."""

    @property
    def name(self) -> str:
        """``retriever=dense,rerank=llm``: the configuration column's value."""
        return ",".join(f"{axis}={value}" for axis, value in self.values)

    def get(self, axis: str) -> str | None:
        """This configuration's value on ``axis`` (None: not on the grid)."""
        return dict(self.values).get(axis)


@dataclass(frozen=True)
class Grid:
    """Axes in the order given, each with its values in the order given."""

    axes: tuple[tuple[str, tuple[str, ...]], ...]
    rags: Mapping[str, object] | None = None
    """Named RAG objects for the ``rag`` axis, from Python (None: its values are specs)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The axes' names."""
        return tuple(axis for axis, _ in self.axes)

    def configurations(self) -> tuple[Configuration, ...]:
        """Every combination, the first axis varying slowest."""
        rags = self.rags or {}
        return tuple(
            Configuration(
                tuple(zip(self.names, chosen, strict=True)),
                rag=rags.get(dict(zip(self.names, chosen, strict=True)).get(RAG_AXIS, "")),
            )
            for chosen in itertools.product(*(values for _, values in self.axes))
        )

    def __str__(self) -> str:
        return " ".join(f"{axis}={','.join(values)}" for axis, values in self.axes)

    @classmethod
    def parse(cls, specs: str | Iterable[str] | Mapping[str, object]) -> Grid:
        """The grid from ``AXIS=V1,V2`` texts (the CLI's repeated ``--grid``), or from Python a
        mapping of axis to values (``{"retriever": ["bm25", "dense"], "rag": {"mine": chain}}``:
        the ``rag`` axis takes named objects or specs).

        Raises:
            InputError: an unknown axis, an axis given twice, an empty or repeated value, a
                value the axis does not take, or ``rag`` beside the built-in pipeline's axes.

        >>> grid = Grid.parse(["retriever=bm25,dense", "rerank=none,llm"])
        >>> [c.name for c in grid.configurations()][:2]
        ['retriever=bm25,rerank=none', 'retriever=bm25,rerank=llm']
        """
        rags: dict[str, object] | None = None
        pairs: list[tuple[str, list[str]]] = []
        if isinstance(specs, Mapping):
            for axis, given in specs.items():
                if axis == RAG_AXIS and isinstance(given, Mapping):
                    rags = {str(name): obj for name, obj in given.items()}
                    pairs.append((axis, list(rags)))
                elif isinstance(given, str):
                    pairs.append((str(axis), _split(given)))
                elif isinstance(given, Iterable):
                    pairs.append((str(axis), [str(v) for v in given]))
                else:
                    raise InputError(
                        f"the {axis} axis needs a list of values, got {given!r}", field="grid"
                    )
        else:
            for spec in [specs] if isinstance(specs, str) else list(specs):
                axis, sep, listed = spec.partition("=")
                if not sep:
                    raise InputError(
                        f"{spec!r} is no axis: give AXIS=V1,V2,... (axes: {', '.join(AXES)})",
                        field="grid",
                    )
                pairs.append((axis.strip(), _split(listed)))
        if not pairs:
            raise InputError("give at least one axis, e.g. retriever=bm25,dense", field="grid")
        seen: set[str] = set()
        for axis, values in pairs:
            _check_axis(axis, values, seen)
        if RAG_AXIS in seen and seen & set(PIPELINE_AXES):
            built_in = next(a for a, _ in pairs if a in PIPELINE_AXES)
            raise InputError(
                f"the {built_in} axis applies to the built-in pipeline, not to your own RAGs "
                "(the rag axis), which retrieve by themselves",
                field=f"grid.{built_in}",
            )
        return cls(tuple((axis, tuple(values)) for axis, values in pairs), rags)


def _split(listed: str) -> list[str]:
    return [value.strip() for value in listed.split(",")]


def _check_axis(axis: str, values: Sequence[str], seen: set[str]) -> None:
    """One axis: known, given once, its values distinct and each one it takes."""
    if axis not in AXES:
        hint = " (k is swept by --ks / ks)" if axis == "k" else ""
        raise InputError(f"unknown axis {axis!r}; axes: {', '.join(AXES)}{hint}", field="grid")
    if axis in seen:
        raise InputError(f"the {axis} axis is given twice: list its values once", field="grid")
    seen.add(axis)
    if not values or any(not v for v in values):
        raise InputError(f"the {axis} axis has an empty value", field=f"grid.{axis}")
    if len(set(values)) != len(values):
        repeated = next(v for v in values if list(values).count(v) > 1)
        raise InputError(f"the {axis} axis lists {repeated!r} twice", field=f"grid.{axis}")
    for value in values:
        _check_value(axis, value)


def _check_value(axis: str, value: str) -> None:
    """``value`` is one the axis takes (a reranker's path must exist; a passage size parses)."""
    if axis == "retriever" and value not in RETRIEVERS:
        raise InputError(
            f"unknown retriever {value!r}; one of {', '.join(RETRIEVERS)}", field="grid.retriever"
        )
    if axis == "rerank" and value != NO_RERANK:
        from rag_judge.pipeline.rerank import check_rerank_spec

        try:
            check_rerank_spec(value)
        except InputError as error:
            raise InputError(f"{error.message} (or {NO_RERANK})", field="grid.rerank") from None
    if axis == "chunk":
        ChunkSize.parse(value)
