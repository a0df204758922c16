"""Many prompts run together in llama.cpp, their shared prefix read once.

A sweep asks the local model ten prompts per step that differ only after a shared prefix (the
passages up to k). One at a time, each answer is written one token per forward pass over the
weights. Here the prompts run together in a second llama.cpp context with one sequence each:
the longest prompt's prefix is read once into sequence 0 (kept between groups, as llama.cpp
keeps its cache between calls), every prompt's sequence shares it up to where they differ
(``llama_memory_seq_cp``, no copy with a unified KV cache), the prompts' tails are read in
one ``llama_batch``, and each decode step of every reply is one forward pass. Measured at 0.79
of the per-k calls' time for the same tokens (``benchmarks/read_faster.py``). A group's
sequences are kept until the next group has copied from them: a judge's prompt for k that
repeats the question line the answer's prompt for k ended with starts from that sequence, not
only from sequence 0.

Replies are greedy (temperature 0), as :meth:`LocalLlama.complete` gives them at temperature 0;
prompts are tokenized as ``create_chat_completion`` tokenizes them. P(yes) items keep the
logits of their last prompt position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from llama_cpp import Llama

MAX_SEQUENCES = 16
"""Prompts run at once (llama.cpp sequences besides the kept prefix); more are run in groups."""


@dataclass(frozen=True)
class PromptItem:
    """One prompt of those run together: its tokens, and how many reply tokens to write (0:
    none, only the next-token logits of its last position are wanted)."""

    tokens: tuple[int, ...]
    max_tokens: int


@dataclass(frozen=True)
class PromptReply:
    """What one prompt gave: the reply's tokens and why it ended, or its logits."""

    tokens: tuple[int, ...] = ()
    finish_reason: str | None = None
    logits: npt.NDArray[np.float32] | None = None
    """Next-token logits after the prompt (only for ``max_tokens=0`` items)."""


class ContextOverflow(RuntimeError):
    """The prompts and their replies do not fit the shared-prefix context."""


class SharedPrefixContext:
    """A llama.cpp context beside the model's own, with one sequence per prompt run together."""

    def __init__(self, llama: Llama, *, n_ctx: int, n_threads: int, abort: Any = None) -> None:
        import llama_cpp as native

        params = native.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = n_ctx, 2048, 512
        params.n_seq_max, params.kv_unified = 2 * MAX_SEQUENCES + 1, True
        params.n_threads = params.n_threads_batch = n_threads
        self._native = native
        self._llama = llama
        self._ctx = native.llama_init_from_model(llama.model, params)
        if not self._ctx:
            raise RuntimeError("llama.cpp could not create the shared-prefix context")
        if abort is not None:
            native.llama_set_abort_callback(self._ctx, abort, None)
        self._memory = native.llama_get_memory(self._ctx)
        self._batch = native.llama_batch_init(params.n_batch, 0, 1)
        self.n_ctx = native.llama_n_ctx(self._ctx)
        self.n_batch = params.n_batch
        self._vocab = native.llama_model_get_vocab(llama.model)
        self._n_vocab = llama.n_vocab()
        self._kept: list[int] = []
        """The tokens sequence 0 holds (the last group's shared prefix)."""
        self._bank = 1
        """Sequences 1..16 or 17..32: each group uses the bank the group before did not."""
        self._donor_prompts: dict[int, tuple[int, ...]] = {}
        """The last group's sequences, kept for the next group to copy from: their prompts."""
        self._donor_cells = 0
        """KV cells the kept sequences hold beyond sequence 0 (tails and replies)."""

    def close(self) -> None:
        """Free the context and its ``llama_batch``."""
        if self._ctx:
            self._native.llama_batch_free(self._batch)
            self._native.llama_free(self._ctx)
            self._ctx = None

    def __del__(self) -> None:
        self.close()

    def run(self, items: Sequence[PromptItem]) -> list[PromptReply]:
        """Every item's reply: the prompts read and the replies written together, in groups."""
        replies: list[PromptReply] = []
        for group in self._groups(items):
            replies.extend(self._run_group(group))
        return replies

    def _groups(self, items: Sequence[PromptItem]) -> list[list[PromptItem]]:
        """Consecutive items in groups that fit the sequences and the context."""
        groups: list[list[PromptItem]] = []
        for item in items:
            if len(item.tokens) + item.max_tokens + 1 > self.n_ctx:
                raise ContextOverflow(
                    f"a prompt of {len(item.tokens)} tokens and its reply of up to "
                    f"{item.max_tokens} do not fit n_ctx={self.n_ctx}"
                )
            group = groups[-1] if groups else None
            if group is None or len(group) == MAX_SEQUENCES or _cells([*group, item]) > self.n_ctx:
                groups.append([item])
            else:
                group.append(item)
        return groups

    def _run_group(self, items: list[PromptItem]) -> list[PromptReply]:
        native, memory = self._native, self._memory
        trunk, shared = _shared(items)
        prefix = list(trunk[: max(shared)])
        keep = _common(self._kept, prefix)
        native.llama_memory_seq_rm(memory, 0, keep, -1)
        self._kept = self._kept[:keep]
        for start in range(keep, len(prefix), self.n_batch):
            chunk = prefix[start : start + self.n_batch]
            self._decode([(token, start + i, 0, False) for i, token in enumerate(chunk)])
        self._kept = prefix
        bank = 1 - self._bank  # the last group's sequences, in the other bank, are donors
        seqs = [1 + bank * MAX_SEQUENCES + i for i in range(len(items))]
        donors, starts = self._donors(items, shared, len(prefix))
        for seq, donor, start in zip(seqs, donors, starts, strict=True):
            native.llama_memory_seq_rm(memory, seq, -1, -1)
            native.llama_memory_seq_cp(memory, donor, seq, 0, start)
        self._forget_donors()
        try:
            replies = self._replies(items, starts, seqs)
        except BaseException:
            for seq in seqs:
                native.llama_memory_seq_rm(memory, seq, -1, -1)
            raise
        self._bank = bank
        self._donor_prompts = {
            seq: item.tokens for seq, item in zip(seqs, items, strict=True) if item.tokens
        }
        self._donor_cells = sum(
            len(item.tokens) - start + len(reply.tokens)
            for item, start, reply in zip(items, starts, replies, strict=True)
        )
        return replies

    def _donors(
        self, items: list[PromptItem], shared: list[int], prefix: int
    ) -> tuple[list[int], list[int]]:
        """Per item, the sequence to copy its start from and how many tokens: the kept prefix
        (sequence 0), or a sequence of the last group whose prompt shares more (a judge's prompt
        that repeats the question line the answer's prompt ended with), when the cells allow."""
        donors, starts = [0] * len(items), list(shared)
        for i, item in enumerate(items):
            for seq, prompt in self._donor_prompts.items():
                n = min(_common(item.tokens, prompt), len(item.tokens) - 1)
                if n > starts[i]:
                    donors[i], starts[i] = seq, n
        pairs = zip(items, starts, strict=True)
        need = (
            prefix
            + self._donor_cells
            + sum(len(item.tokens) - start + item.max_tokens for item, start in pairs)
        )
        if need > self.n_ctx:  # no room to keep the donors while this group runs
            self._forget_donors()
            return [0] * len(items), list(shared)
        return donors, starts

    def _forget_donors(self) -> None:
        for seq in self._donor_prompts:
            self._native.llama_memory_seq_rm(self._memory, seq, -1, -1)
        self._donor_prompts, self._donor_cells = {}, 0

    def _replies(
        self, items: list[PromptItem], starts: list[int], seqs: list[int]
    ) -> list[PromptReply]:
        """Read every item's tail after its copied start, then write the replies greedily."""
        entries: list[tuple[int, int, int, bool]] = []
        owner: list[int] = []
        for i, (item, start, seq) in enumerate(zip(items, starts, seqs, strict=True)):
            tail = item.tokens[start:]
            for j, token in enumerate(tail):
                entries.append((token, start + j, seq, j == len(tail) - 1))
                owner.append(i)
        last: dict[int, npt.NDArray[np.float32]] = {}
        for begin in range(0, len(entries), self.n_batch):
            chunk = entries[begin : begin + self.n_batch]
            self._decode(chunk)
            for index, entry in enumerate(chunk):
                if entry[3]:
                    last[owner[begin + index]] = self._logits(index)
        written: list[list[int]] = [[] for _ in items]
        finish: list[str | None] = [None] * len(items)
        replies: list[PromptReply | None] = [None] * len(items)
        active: list[int] = []
        for i, item in enumerate(items):
            if item.max_tokens == 0:
                replies[i] = PromptReply(logits=last[i])
            else:
                active.append(i)
        positions = {i: len(items[i].tokens) for i in active}
        logits = last
        while active:
            step: list[tuple[int, int, int, bool]] = []
            going: list[int] = []
            for i in active:
                token = int(np.argmax(logits[i]))
                if self._native.llama_vocab_is_eog(self._vocab, token):
                    finish[i] = "stop"
                    continue
                written[i].append(token)
                if len(written[i]) >= items[i].max_tokens:
                    finish[i] = "length"
                    continue
                step.append((token, positions[i], seqs[i], True))
                positions[i] += 1
                going.append(i)
            if not going:
                break
            self._decode(step)
            logits = {i: self._logits(index) for index, i in enumerate(going)}
            active = going
        for i in range(len(items)):
            if replies[i] is None:
                replies[i] = PromptReply(tokens=tuple(written[i]), finish_reason=finish[i])
        return [reply for reply in replies if reply is not None]

    def _decode(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of (token, position, sequence, wants logits) entries."""
        batch = self._batch
        for n, (token, position, seq, wants) in enumerate(entries):
            batch.token[n], batch.pos[n] = token, position
            batch.n_seq_id[n], batch.seq_id[n][0] = 1, seq
            batch.logits[n] = wants
        batch.n_tokens = len(entries)
        code = self._native.llama_decode(self._ctx, batch)
        batch.n_tokens = 0
        if code == 1:
            raise ContextOverflow("no room left in the shared-prefix context's KV cache")
        if code != 0:
            raise RuntimeError(f"llama_decode failed (code {code})")

    def _logits(self, index: int) -> npt.NDArray[np.float32]:
        pointer = self._native.llama_get_logits_ith(self._ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).copy()


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    left, right = np.asarray(a[:n]), np.asarray(b[:n])
    differ = np.flatnonzero(left != right)
    return int(differ[0]) if differ.size else n


def _shared(items: Sequence[PromptItem]) -> tuple[tuple[int, ...], list[int]]:
    """The group's trunk (its longest prompt) and how much of it each prompt shares (at most
    all but its last token, whose logits its own sequence must give)."""
    trunk = max(items, key=lambda item: len(item.tokens)).tokens
    return trunk, [min(_common(item.tokens, trunk), len(item.tokens) - 1) for item in items]


def _cells(items: Sequence[PromptItem]) -> int:
    """KV cells a group needs at most: the shared prefix once, every tail, every reply."""
    _, shared = _shared(items)
    pairs = zip(items, shared, strict=True)
    tails = sum(len(item.tokens) - start + item.max_tokens for item, start in pairs)
    return max(shared) + tails
