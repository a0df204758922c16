"""Bring your own RAG: a user's system, not ours, retrieves (and may answer) in the k-sweep.

:func:`load_external_rag` picks a source from a spec string:

* ``module:attr``: a LangChain retriever or runnable chain, or a LlamaIndex retriever or query
  engine, recognised by type (:mod:`rag_judge.pipeline.frameworks`); else a Python callable
  ``fn(question, k)``, sync or async, returning the top ``k`` passages. Sync callables run one
  at a time in a worker thread.
* ``retrievals.jsonl``: precomputed, one line per question::

      {"question_id": "q1", "contexts": ["...", {"id": "c7", "text": "...", "doc_id": "d3"}],
       "answers": {"1": "...", "2": "..."}}

  ``answers`` (one per k of the sweep) is optional; without it the sweep generates them.
* ``http://`` or ``https://``: an endpoint answering ``POST {"question": ..., "k": K}`` with
  ``{"contexts": [...], "answer": "..."}`` (``answer`` optional). When it answers, it is asked
  once more for every other k, and its top k must be the first k of its top K.

A passage is a string or ``{"id", "text", "doc_id"}`` (``text`` required); it becomes a
:class:`Passage`. A string, or a dict without ``id``, is named ``<question id>#<rank>``.
The sweep asks for the top K once per question and reads every k as its first k.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any, Final

from rag_judge.core.errors import InputError
from rag_judge.pipeline.external.base import CallableRag, ExternalRag, JsonlRag
from rag_judge.pipeline.external.where import described, where

_CALLABLE_SPEC: Final = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def load_external_rag(spec: str, *, timeout: float | None = None) -> ExternalRag:
    """An external RAG from ``module:function``, a ``.jsonl`` path or an ``http(s)://`` URL;
    ``timeout``: seconds an endpoint may take per request (default: the endpoint's own 60).

    Raises:
        InputError: the spec matches none of these, or names what cannot be loaded.
    """
    if spec.startswith(("http://", "https://")):
        from rag_judge.pipeline.external.base import DEFAULT_TIMEOUT
        from rag_judge.pipeline.external.http import HttpRag

        return HttpRag(spec, timeout=timeout or DEFAULT_TIMEOUT)
    if spec.lower().endswith(".jsonl"):
        return JsonlRag(spec)
    if _CALLABLE_SPEC.fullmatch(spec):
        return rag_from_object(_import_attribute(spec), name=spec)
    raise InputError(
        f"cannot tell what {spec!r} is: give module:function (a Python callable), a .jsonl "
        "file of precomputed retrievals, or an http(s):// endpoint",
        field="rag",
    )


def external_rag(rag: object, *, timeout: float | None = None) -> ExternalRag:
    """The sweep's RAG from what a caller gave: a spec string (:func:`load_external_rag`), or
    an object (:func:`rag_from_object`).

    Raises:
        InputError: a spec or an object the sweep cannot use.
    """
    if isinstance(rag, str):
        return load_external_rag(rag, timeout=timeout)
    return rag_from_object(rag, name=type(rag).__name__)


def rag_from_object(obj: object, *, name: str) -> ExternalRag:
    """An object as the sweep's RAG: a framework's (checked first: a LangChain runnable has
    ``invoke``, and some framework objects are callable with another meaning), an
    :class:`ExternalRag` as it is, or a callable ``fn(question, k)``.

    Raises:
        InputError: none of these; a framework object of the wrong kind (named).
    """
    from rag_judge.pipeline.frameworks.detect import framework_rag

    if (found := framework_rag(obj, name)) is not None:
        return found
    if callable(getattr(obj, "retrieve", None)) and isinstance(getattr(obj, "name", None), str):
        return obj  # type: ignore[return-value]
    if callable(obj):
        return CallableRag(obj, name=f"callable {name}")
    raise InputError(
        f"{name!r} is not callable ({type(obj).__name__}): give a callable fn(question, k), a "
        "LangChain retriever or chain, or a LlamaIndex retriever or query engine",
        field="rag",
    )


def _import_attribute(spec: str) -> object:
    """``module:attr.path`` imported; the current directory is tried when it is not on the path."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = _import(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name or module_name.startswith(f"{error.name}."):
            raise InputError(f"cannot import {module_name!r}: {error}", field="rag") from None
        raise InputError(
            f"cannot import {module_name!r}: {described(error)}", field="rag"
        ) from None
    except Exception as error:  # the user's module failed as it loaded: a syntax error, a raise
        raise InputError(
            f"cannot import {module_name!r}: {described(error)}", field="rag"
        ) from None
    except SystemExit as stop:
        raise InputError(
            f"cannot import {module_name!r}: it called sys.exit({stop.code!r}) as it loaded "
            f"(at {where(stop)})",
            field="rag",
        ) from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise InputError(f"{module_name!r} has no attribute {attribute!r}", field="rag")
        target = getattr(target, part)
    return target


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        here = os.getcwd()
        if error.name != module_name.split(".")[0] or here in sys.path:
            raise
        sys.path.insert(0, here)
        try:
            return importlib.import_module(module_name)
        finally:
            sys.path.remove(here)
