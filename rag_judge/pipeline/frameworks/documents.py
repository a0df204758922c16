"""A framework's retrieved document as a passage: its text, its id, and its eval-set document id.

The ``doc_*`` measures compare a passage's document id with the eval set's qrels, so the id
that names the eval set's document must win over ids a store or a framework makes up:

* **LangChain** ``Document``: ``metadata["doc_id"]``, else ``metadata["id"]``, else
  ``Document.id``. The metadata comes first because ``Document.id`` is, by LangChain's own
  docstring, "ideally ... a UUID": vector stores fill it with their point ids (an in-memory
  store draws a ``uuid4`` for every document added without one).
* **LlamaIndex** node: ``metadata["doc_id"]``, else ``metadata["id"]``, else the id of the
  ``Document`` the node was cut from (its source node, which a user names with
  ``Document(id_=...)``). The node's own ``node_id`` names the chunk, not the document, and is a
  generated UUID unless set (Qdrant accepts only UUIDs or integers as point ids), so it is the
  passage's id, never its document id.

A document with none of these has no document id: the sweep then scores it by answer text only
and the summary says why (:func:`rag_judge.jobs.sweep.sources.from_rag`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

ID_KEYS: Final = ("doc_id", "id")
"""Metadata keys that name the eval set's document, in order of preference."""


def _from_metadata(metadata: object) -> str | None:
    if isinstance(metadata, Mapping):
        for key in ID_KEYS:
            value = metadata.get(key)
            if value is not None and not isinstance(value, bool) and str(value).strip():
                return str(value)
    return None


def langchain_passage(document: Any) -> dict[str, Any]:
    """A LangChain ``Document`` as ``{"id", "text", "doc_id"}`` (see the module's rules)."""
    own = getattr(document, "id", None)
    own = str(own) if own is not None and str(own).strip() else None
    passage: dict[str, Any] = {
        "text": document.page_content,
        "doc_id": _from_metadata(getattr(document, "metadata", None)) or own,
    }
    if own is not None:
        passage["id"] = own
    return passage


def llamaindex_passage(scored: Any) -> dict[str, Any]:
    """A LlamaIndex ``NodeWithScore`` (or node) as ``{"id", "text", "doc_id"}``."""
    node = getattr(scored, "node", scored)
    source = getattr(node, "source_node", None)
    source_id = getattr(source, "node_id", None) if source is not None else None
    return {
        "id": str(node.node_id),
        "text": node.get_content(),
        "doc_id": _from_metadata(getattr(node, "metadata", None)) or source_id,
    }
