"""Search: the agent's own tool history as a tool it can call."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

import grpc
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

# SearchMatch at run time: LangGraph's ToolNode reads the search tool's functions' annotations.
from toolhistory._grpc import SearchMatch
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.errors import ToolHistoryError
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from toolhistory.client import ToolHistoryClient


SEARCH_HISTORY_TOOL_NAME = "search_history"
SEARCH_HISTORY_TOOL_DESCRIPTION = (
    "Search the tool calls made earlier in this conversation: their tool names, arguments and results. "
    'match "substring" finds a literal text anywhere, inside words too, in any case (at least 3 characters), '
    "newest first; "
    'match "words" finds whole words (free text: "a phrase", -excluded, or), best first. '
    "Answers the hits: tool, when, where it matched (call and/or result), a snippet with the match in ** **, "
    "and the run."
)
SEARCH_HISTORY_MAX_LIMIT = 20
"""At most this many hits per call: the answer goes back into the model's context."""
_SEARCH_HISTORY_DEFAULT_LIMIT = 5


class SearchHistoryInput(BaseModel):
    """What the model sends to ``search_history`` (the same input as the TypeScript client's tool)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="The text to look for")
    match: Literal["words", "substring"] | None = Field(
        default=None, description="substring: a literal text anywhere (at least 3 characters); words: whole words"
    )
    limit: int = Field(
        default=_SEARCH_HISTORY_DEFAULT_LIMIT,
        ge=1,
        le=SEARCH_HISTORY_MAX_LIMIT,
        description=f"Most hits to return (default {_SEARCH_HISTORY_DEFAULT_LIMIT})",
    )


def search_history_tool(
    client: ToolHistoryClient | AsyncToolHistoryClient,
    *,
    tenant_id: str,
    conversation_id: str,
    default_match: SearchMatch = "substring",
) -> StructuredTool:
    """A LangChain tool ``search_history`` with which the model searches the tool calls made earlier in the
    conversation it runs in (SearchToolHistory limited to ``conversation_id``, so a token with ``history:read``
    for the tenant is enough).

    Input: ``query``, ``match`` (``"words"`` or ``"substring"``; ``default_match`` when the model leaves it out)
    and ``limit`` (1 to 20, default 5). Answer, the ToolMessage's content: JSON text
    ``{"hits": [{"tool", "at", "matchedIn": ["call" | "result"], "snippet", "runId", "toolCallId"}]}``, as the
    TypeScript client's tool answers. A query the service refuses (a substring under 3 characters) is answered
    to the model as the tool's error text; any other failure raises :class:`~toolhistory.errors.ToolHistoryError`.

    With a :class:`~toolhistory.client.ToolHistoryClient` the tool runs sync and async (``ainvoke`` runs the call
    on LangChain's executor); with an :class:`~toolhistory.aio.AsyncToolHistoryClient` it runs async only.
    """
    if default_match not in ("words", "substring"):
        raise ValueError(f"search_history_tool: default_match must be 'words' or 'substring', not {default_match!r}")

    def arguments(query: str, match: SearchMatch | None, limit: int) -> dict[str, Any]:
        return {
            "tenant_id": tenant_id,
            "conversation_id": conversation_id,
            "query": query,
            "match": match or default_match,
            "limit": limit,
        }

    if isinstance(client, AsyncToolHistoryClient):
        return _async_search_tool(client, arguments)
    return _sync_search_tool(client, arguments)


def _async_search_tool(
    client: AsyncToolHistoryClient, arguments: Callable[[str, SearchMatch | None, int], dict[str, Any]]
) -> StructuredTool:
    async def search_async(
        query: str, match: SearchMatch | None = None, limit: int = _SEARCH_HISTORY_DEFAULT_LIMIT
    ) -> str:
        with _refused_query_to_the_model():
            response = await client.search_tool_history(**arguments(query, match, limit))
        return search_history_answer(response)

    return StructuredTool.from_function(
        coroutine=search_async,
        name=SEARCH_HISTORY_TOOL_NAME,
        description=SEARCH_HISTORY_TOOL_DESCRIPTION,
        args_schema=SearchHistoryInput,
        handle_tool_error=True,
    )


def _sync_search_tool(
    client: ToolHistoryClient, arguments: Callable[[str, SearchMatch | None, int], dict[str, Any]]
) -> StructuredTool:
    def search(query: str, match: SearchMatch | None = None, limit: int = _SEARCH_HISTORY_DEFAULT_LIMIT) -> str:
        with _refused_query_to_the_model():
            response = client.search_tool_history(**arguments(query, match, limit))
        return search_history_answer(response)

    return StructuredTool.from_function(
        func=search,
        name=SEARCH_HISTORY_TOOL_NAME,
        description=SEARCH_HISTORY_TOOL_DESCRIPTION,
        args_schema=SearchHistoryInput,
        handle_tool_error=True,
    )


def search_history_answer(response: toolhistory_pb2.SearchToolHistoryResponse) -> str:
    """The ``search_history`` tool's answer to the model: the hits, compact, as JSON text."""
    return json.dumps({"hits": [_compact_hit(hit) for hit in response.hits]}, ensure_ascii=False)


def _compact_hit(hit: toolhistory_pb2.SearchHit) -> dict[str, Any]:
    matched_in: list[str] = []
    for where in hit.matched_in:
        side = _SEARCH_HIT_SIDE.get(where)
        if side is not None and side not in matched_in:
            matched_in.append(side)
    invocation = hit.invocation
    when = (
        invocation.requested_at
        if invocation.HasField("requested_at")
        else invocation.completed_at
        if invocation.HasField("completed_at")
        else None
    )
    return {
        "tool": invocation.tool_name,
        "at": _iso_millis(when.ToDatetime(tzinfo=timezone.utc)) if when is not None else None,
        "matchedIn": matched_in,
        "snippet": hit.snippet,
        "runId": invocation.run_id,
        "toolCallId": invocation.tool_call_id,
    }


# The call is the tool name and its arguments; the result is the result.
_SEARCH_HIT_SIDE: Mapping[int, str] = {
    toolhistory_pb2.SEARCH_HIT_FIELD_TOOL_NAME: "call",
    toolhistory_pb2.SEARCH_HIT_FIELD_ARGUMENTS: "call",
    toolhistory_pb2.SEARCH_HIT_FIELD_RESULT: "result",
}


@contextlib.contextmanager
def _refused_query_to_the_model() -> Iterator[None]:
    """A query the service refuses is the model's to correct: its message becomes the tool's error answer."""
    try:
        yield
    except ToolHistoryError as error:
        if error.code == grpc.StatusCode.INVALID_ARGUMENT:
            raise ToolException(error.details) from error
        raise


def _iso_millis(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z``, as JavaScript's ``toISOString`` writes it."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
