"""Which framework an object comes from, told by its type's modules: nothing is imported.

An object of LangChain or LlamaIndex can exist only if its library is already loaded, so
looking at the names of the modules its classes are defined in is enough to recognise it, and
rag_judge never imports a framework to find out that an object is not one of its.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType
from typing import Final

from rag_judge.core.errors import InputError
from rag_judge.pipeline.external.base import ExternalRag


@dataclass(frozen=True)
class Framework:
    """A RAG framework rag_judge recognises, and the extra that installs what it needs."""

    label: str
    """Its name in messages."""
    packages: tuple[str, ...]
    """Top-level module names whose classes belong to it."""
    core: str
    """The module an adapter needs (imported only then)."""
    extra: str
    """``pip install 'rag-judge[extra]'`` installs it with its Qdrant connector."""

    @property
    def install_hint(self) -> str:
        """What to run when it is missing."""
        return f"pip install 'rag-judge[{self.extra}]'"


LANGCHAIN: Final = Framework(
    "LangChain", ("langchain_core", "langchain"), "langchain_core", "langchain"
)
LLAMAINDEX: Final = Framework("LlamaIndex", ("llama_index",), "llama_index.core", "llamaindex")
FRAMEWORKS: Final = (LANGCHAIN, LLAMAINDEX)


def framework_of(obj: object) -> Framework | None:
    """The framework one of ``obj``'s classes is defined in, or None (a plain object)."""
    for cls in type(obj).__mro__:
        top = (cls.__module__ or "").split(".")[0]
        for framework in FRAMEWORKS:
            if top in framework.packages:
                return framework
    return None


def require(framework: Framework, what: str, module: str | None = None) -> ModuleType:
    """``module`` (default: the framework's core) imported, or an InputError naming the extra.

    Raises:
        InputError: the module is not installed; the message says which extra installs it.
    """
    name = module or framework.core
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a None in sys.modules
        found = False
    if not found:
        raise InputError(
            f"{what} needs {framework.label} ({name} is not installed): {framework.install_hint}"
        )
    return importlib.import_module(name)


def framework_rag(obj: object, name: str) -> ExternalRag | None:
    """``obj`` as the sweep's RAG when it is a LangChain or LlamaIndex object, else None.

    Raises:
        InputError: an object of a framework that is not a retriever, chain or query engine
            (the message says what to give instead), or whose retriever's k cannot be set.
    """
    framework = framework_of(obj)
    if framework is None:
        return None
    require(framework, f"{name} (a {framework.label} object)")
    if framework is LANGCHAIN:
        from rag_judge.pipeline.frameworks.langchain_rag import langchain_rag

        return langchain_rag(obj, name)
    from rag_judge.pipeline.frameworks.llamaindex_rag import llamaindex_rag

    return llamaindex_rag(obj, name)
