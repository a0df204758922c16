"""What each LLM step must reply, as pydantic models (named in the prompt files' front matter).

Field order is the order a model writes them in: a short reason before the verdict helps a
small model, and the constrained decoder follows the schema's order.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rag_judge.core.types import VerdictLabel

MAX_PARTS = 4
"""Facts a decomposed sentence may give: the grammar stops the list there."""


class ClaimList(BaseModel):
    """Atomic, self-contained claims extracted from a text."""

    model_config = ConfigDict(extra="ignore")

    claims: list[str] = Field(description="One atomic, self-contained statement per item.")


class ClaimSplit(BaseModel):
    """The separate facts of one long sentence, in its own words (the scoring path).

    The cap is in the JSON schema only, which the local model's grammar enforces while decoding
    (each fact's length is bounded by the call's token budget); a longer list from another
    backend still parses, and the caller cuts it.
    """

    model_config = ConfigDict(extra="ignore")

    claims: list[str] = Field(
        json_schema_extra={"maxItems": MAX_PARTS}, description="One fact per item, at most four."
    )


class ClaimCheck(BaseModel):
    """The verdict on one numbered claim against numbered passages."""

    model_config = ConfigDict(extra="ignore")

    claim: int = Field(ge=1, description="The claim's number, as given.")
    reason: str = Field(description="One short sentence.")
    verdict: VerdictLabel
    passages: list[int] = Field(
        default_factory=list,
        description="Numbers of the passages that support (or contradict) the claim.",
    )


class ClaimChecks(BaseModel):
    """Verdicts for every numbered claim."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[ClaimCheck]


class ReverseQuestions(BaseModel):
    """Questions the answer answers, and whether the answer dodges the question."""

    model_config = ConfigDict(extra="ignore")

    questions: list[str] = Field(description="Questions this answer answers.")
    noncommittal: bool = Field(
        description="True when the answer is evasive or says it does not know."
    )


class SynthQuestion(BaseModel):
    """A synthetic question and its reference answer, written from one or two passages."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(description="A question a user would ask, standing on its own.")
    answer: str = Field(description="Its short answer, taken from the passage(s).")


class OpenQuestion(BaseModel):
    """A synthetic question the passage does not answer (no reference answer)."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(description="A question on the passage's subject it does not answer.")


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model
    for model in (ClaimList, ClaimSplit, ClaimChecks, ReverseQuestions, SynthQuestion, OpenQuestion)
}
"""Output models by the name prompt files use in their ``output`` field."""
