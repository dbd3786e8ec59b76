"""The JSON bodies of ``mathgraph serve``'s endpoints (pydantic models; FastAPI turns them into the
OpenAPI schema and answers a body that does not fit with a 422 naming the field).

Every endpoint but ``draw`` and ``check`` takes a batch: ``texts``, ``inputs`` or ``queries`` are lists of one or more.
The limits a server is started with (``service.Limits``) are checked by the endpoints, not here, since
they are known only at run time.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("the text is empty (or only whitespace)")
    return text


def _valid_unicode(text: str) -> str:
    """Refuse a lone surrogate (JSON's ``"\\ud800"`` decodes to one): no parser or tokenizer can encode it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"the text is not valid Unicode: a lone surrogate (U+{ord(text[error.start]):04X}) at character "
            f"{error.start}"
        ) from None
    return text


# A problem, query, candidate or solution: a non-blank string of valid Unicode.
Text = Annotated[str, AfterValidator(_valid_unicode), AfterValidator(_not_blank)]
Texts = Annotated[list[Text], Field(min_length=1)]


class Body(BaseModel):
    """A request body: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class ParseRequest(Body):
    texts: Texts = Field(description="problems, with LaTeX formulas between $...$")
    layout: bool = Field(
        False,
        description="also return each graph's drawing layout (node positions and "
        "colours, as `mathgraph.draw.graph_layout`)",
    )
    bare_arithmetic: bool = Field(False, description="treat arithmetic in plain text (48/2 = 24) as formulas")


class DrawRequest(Body):
    text: Text = Field(description="one problem")
    relations: bool = Field(True, description="write relation names on the edges")


class EncodeRequest(Body):
    texts: Texts
    mode: Literal["joint", "text", "graph", "fused"] = "joint"  # "fused": the old name of "joint"


class PairInput(Body):
    """A QRC or QAM input."""

    text_a: Text
    text_b: Text


class RankingInput(Body):
    """An SQR input: a query and the candidates to rank."""

    query: Text
    candidates: Texts


def _input_kind(value) -> str | None:
    """Which input shape a value is meant to be, so a bad one is reported against that shape alone."""
    if isinstance(value, (str, PairInput, RankingInput)):
        return {str: "text", PairInput: "pair", RankingInput: "ranking"}[type(value)]
    if isinstance(value, dict):
        return "ranking" if "query" in value or "candidates" in value else "pair"
    return None  # pydantic: "Unable to extract tag using discriminator"


TaskInput = Annotated[
    Annotated[Text, Tag("text")] | Annotated[PairInput, Tag("pair")] | Annotated[RankingInput, Tag("ranking")],
    Discriminator(_input_kind),
]


class PredictRequest(Body):
    inputs: Annotated[list[TaskInput], Field(min_length=1)] = Field(
        description="KPC: problem texts; QRC and QAM: {text_a, text_b}; SQR: {query, candidates}"
    )


class CompareRequest(Body):
    pairs: Annotated[list[PairInput], Field(min_length=1)] = Field(
        description="problem pairs {text_a, text_b}: problem b aligned with problem a (with solution: "
        "text_a a question, text_b its solution)"
    )
    solution: bool = Field(
        False,
        description="read text_b as a solution of question text_a: which of its "
        "quantities the solution's steps use (no relation then)",
    )


class SearchRequest(Body):
    queries: Texts
    k: int = Field(5, ge=1, description="results per query (at most the server's max_k)")
    hybrid: bool | None = Field(
        None, description="fuse cosine with TF-IDF scores (None: as dev chose for the shipped model)"
    )


class CheckRequest(Body):
    problem: Text = Field(description="the problem (a question with its quantities)")
    solution: Text = Field(
        description="a worked solution, one step a line (GSM8K style: <<48/2=24>> calculations and a final "
        "'#### answer' line are read too)"
    )
