"""Which outputs of a run are errors: the SDK keeps no flag saying so, only the text it sent the model."""

from __future__ import annotations

import contextvars
import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any

from agents import RunContextWrapper
from agents.tool import default_tool_error_function

DEFAULT_TOOL_ERROR_TEXT: str = str(default_tool_error_function(RunContextWrapper(context=None), Exception()))
"""The text the SDK's default ``failure_error_function`` sends the model for a tool that raised."""

# The SDK's default texts for a tool that timed out and, with tool_not_found_behavior
# "return_error_to_model", for a call of a tool the agent does not have.
_DEFAULT_TIMEOUT_TEXT = re.compile(r"Tool '.*' timed out after \S+ seconds\.", re.DOTALL)
_DEFAULT_NOT_FOUND_TEXT = re.compile(r"Tool '.*' not found\.", re.DOTALL)

ToolErrorTest = Callable[[str, "str | None"], bool]
"""Tells whether a call's output is an error: ``(call_id, text the model was sent or None)``."""

# The call ids whose output tool_error_function (or the wrapped tool_error_formatter) produced,
# for the run being recorded: tool tasks copy the context, and share this set.
error_marks: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "toolhistory_openai_agents_error_marks", default=None
)


def is_sdk_tool_error(call_id: str, text: str | None) -> bool:
    """The default error test: an output ``tool_error_function`` marked, or one of the SDK's default
    texts for a tool that raised, timed out, or does not exist."""
    marks = error_marks.get()
    if marks is not None and call_id in marks:
        return True
    return text is not None and (
        text == DEFAULT_TOOL_ERROR_TEXT
        or _DEFAULT_TIMEOUT_TEXT.fullmatch(text) is not None
        or _DEFAULT_NOT_FOUND_TEXT.fullmatch(text) is not None
    )


def tool_error_function(
    format: Callable[[RunContextWrapper[Any], Exception], str | Awaitable[str]] | None = None,
) -> Callable[[RunContextWrapper[Any], Exception], Awaitable[str]]:
    """A ``failure_error_function`` (or ``timeout_error_function``) for ``@function_tool`` whose
    outputs the recorder records as errors, whatever text they send the model.

    The model is sent the SDK's default error text, or what ``format(ctx, error)`` makes of the error.
    Without it, only the SDK's default texts are told apart from a tool's own result.
    """

    async def on_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
        call_id = getattr(ctx, "tool_call_id", None)
        marks = error_marks.get()
        if marks is not None and isinstance(call_id, str):
            marks.add(call_id)
        if format is None:
            return DEFAULT_TOOL_ERROR_TEXT
        text = format(ctx, error)
        return await text if inspect.isawaitable(text) else text

    return on_error
