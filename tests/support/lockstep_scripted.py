"""A scripted backend that also answers a round's calls together, as the embedded model does
(test double)."""

from __future__ import annotations

from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse


class LockstepScripted(ScriptedBackend):
    """Answers each call of a round from the script; ``rounds_sent`` lists every round."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.rounds_sent: list[list[tuple[str, ChatRequest]]] = []

    @staticmethod
    def takes_together(kind: str, request: ChatRequest) -> bool:
        """P(yes), and replies with no schema (as LocalLlama.takes_together)."""
        return kind == "yes_no" or (kind == "chat" and request.json_schema is None)

    async def run_together(
        self, calls: list[tuple[str, ChatRequest]]
    ) -> list[ChatResponse | YesNoResponse | BackendError]:
        self.rounds_sent.append(list(calls))
        out: list[ChatResponse | YesNoResponse | BackendError] = []
        for kind, request in calls:
            try:
                if kind == "yes_no":
                    out.append(await self.yes_probability(request))
                else:
                    out.append(await self.complete(request))
            except BackendError as error:
                out.append(error)
        return out

    def prompt_ids(self) -> list[list[str]]:
        """Each round's calls as their prompt ids without version (``generate/answer``...)."""
        return [
            [(request.prompt_id or "?").split(".")[0] for _, request in sent]
            for sent in self.rounds_sent
        ]
