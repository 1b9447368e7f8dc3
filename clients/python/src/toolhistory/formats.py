"""The history formats a replay is given in, and the shapes of their messages.

Each format is the input of one provider's API. The service builds the
messages; these TypedDicts describe them, so a caller can annotate what it
takes from a replay (``messages: list[AnthropicMessage] = history.messages()``).
Replay results type the messages as ``Any``: a vendor SDK's parameter types are
TypedDicts of its own, to which no other TypedDict is assignable, so a stricter
type would force a cast where the messages are passed on.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, TypeAlias, TypedDict

HistoryFormat: TypeAlias = Literal["openai", "anthropic", "openai-responses", "gemini", "bedrock-converse"]
"""Whose API's messages each replayed turn carries (the clients' names of the formats)."""


class HistoryFormatNames(NamedTuple):
    """A history format's names: the clients' (``format=``), the gRPC API's ``HistoryFormat`` value, the service's."""

    client: HistoryFormat
    proto: str
    service: str


FORMAT_TABLE: tuple[HistoryFormatNames, ...] = (
    HistoryFormatNames("openai", "HISTORY_FORMAT_OPENAI_CHAT", "openai_chat"),
    HistoryFormatNames("anthropic", "HISTORY_FORMAT_ANTHROPIC_MESSAGES", "anthropic_messages"),
    HistoryFormatNames("openai-responses", "HISTORY_FORMAT_OPENAI_RESPONSES", "openai_responses"),
    HistoryFormatNames("gemini", "HISTORY_FORMAT_GEMINI", "gemini"),
    HistoryFormatNames("bedrock-converse", "HISTORY_FORMAT_BEDROCK_CONVERSE", "bedrock_converse"),
)
"""Every format, declared once: the same rows as the contract's table (libs/contract/src/history-formats.ts), held to
the gRPC API's enum by the unit tests. A new format is a row here, its name in ``HistoryFormat`` and the shapes of its
messages below."""

HISTORY_FORMATS: tuple[HistoryFormat, ...] = tuple(row.client for row in FORMAT_TABLE)

# Each format carries a round's text (what the model said beside its calls) and, while its turn goes on, the reasoning
# recorded with it, where its API wants them (docs/grpc-api.md, "Reasoning and the round's own text").

# -- OpenAI chat completions: per round, an assistant message with tool_calls, then a tool message per call.


class OpenAiFunction(TypedDict):
    name: str
    arguments: str  # the arguments as JSON text


class OpenAiToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: OpenAiFunction


class OpenAiAssistantToolCallMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None  # the round's text; no reasoning (the format has none)
    tool_calls: list[OpenAiToolCall]


class OpenAiToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str


OpenAiChatMessage: TypeAlias = OpenAiAssistantToolCallMessage | OpenAiToolMessage

# -- Anthropic Messages: per round, an assistant message (thinking blocks, text, tool_use blocks), then a user message
# of tool_result blocks.


class AnthropicThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class AnthropicRedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class AnthropicTextBlock(TypedDict):
    type: Literal["text"]
    text: str


class AnthropicToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class AnthropicToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: bool


class AnthropicAssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AnthropicThinkingBlock | AnthropicRedactedThinkingBlock | AnthropicTextBlock | AnthropicToolUseBlock]


class AnthropicToolResultMessage(TypedDict):
    role: Literal["user"]
    content: list[AnthropicToolResultBlock]


AnthropicMessage: TypeAlias = AnthropicAssistantMessage | AnthropicToolResultMessage

# -- OpenAI Responses input items: per round, its reasoning items, its text as an assistant message, a function_call per
# call (its fc_ item id only right after its reasoning), then a function_call_output per call.


class _OpenAiResponsesReasoningFields(TypedDict):
    type: Literal["reasoning"]
    id: str
    summary: list[dict[str, Any]]


class OpenAiResponsesReasoningItem(_OpenAiResponsesReasoningFields, total=False):
    """A reasoning item as the model produced it."""

    encrypted_content: str
    content: list[dict[str, Any]]


class OpenAiResponsesAssistantMessage(TypedDict):
    type: Literal["message"]
    role: Literal["assistant"]
    content: str


class _OpenAiResponsesFunctionCallFields(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


class OpenAiResponsesFunctionCall(_OpenAiResponsesFunctionCallFields, total=False):
    id: str  # the call's own fc_ item id, only right after its reasoning item


class OpenAiResponsesFunctionCallOutput(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: str  # an error result starts with "[error] "


OpenAiResponsesItem: TypeAlias = (
    OpenAiResponsesReasoningItem
    | OpenAiResponsesAssistantMessage
    | OpenAiResponsesFunctionCall
    | OpenAiResponsesFunctionCallOutput
)

# -- Gemini contents: a "model" content (thought parts, text, functionCall parts: a step's first with its thought
# signature), then a "user" content of functionResponse parts.


class _GeminiTextFields(TypedDict):
    text: str


class GeminiTextPart(_GeminiTextFields, total=False):
    """The round's text, or a thought part (``thought: True``) as the model produced it."""

    thought: bool
    thoughtSignature: str


class GeminiFunctionCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]


class _GeminiFunctionCallFields(TypedDict):
    functionCall: GeminiFunctionCall


class GeminiFunctionCallPart(_GeminiFunctionCallFields, total=False):
    thoughtSignature: str  # as recorded; Google's placeholder when the round has none and its turn goes on


class GeminiFunctionResponse(TypedDict):
    id: str
    name: str
    response: dict[str, Any]  # a JSON object result as it is, else {"output": ...}; an error {"error": ...}


class GeminiFunctionResponsePart(TypedDict):
    functionResponse: GeminiFunctionResponse


class GeminiModelContent(TypedDict):
    role: Literal["model"]
    parts: list[GeminiTextPart | GeminiFunctionCallPart]


class GeminiUserContent(TypedDict):
    role: Literal["user"]
    parts: list[GeminiFunctionResponsePart]


GeminiContent: TypeAlias = GeminiModelContent | GeminiUserContent

# -- Bedrock Converse: an assistant message (reasoningContent blocks, text, toolUse blocks), then a user message of
# toolResult blocks.


class BedrockReasoningBlock(TypedDict):
    reasoningContent: dict[str, Any]  # as the model produced it: reasoningText (text, signature) or redactedContent


class BedrockToolUse(TypedDict):
    toolUseId: str
    name: str
    input: dict[str, Any]


class BedrockToolUseBlock(TypedDict):
    toolUse: BedrockToolUse


class BedrockTextContent(TypedDict):
    text: str


class BedrockJsonContent(TypedDict):
    json: Any


class BedrockToolResult(TypedDict):
    toolUseId: str
    content: list[BedrockTextContent | BedrockJsonContent]  # json for a JSON result, text otherwise
    status: Literal["success", "error"]


class BedrockToolResultBlock(TypedDict):
    toolResult: BedrockToolResult


class BedrockAssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[BedrockReasoningBlock | BedrockTextContent | BedrockToolUseBlock]


class BedrockToolResultMessage(TypedDict):
    role: Literal["user"]
    content: list[BedrockToolResultBlock]


BedrockConverseMessage: TypeAlias = BedrockAssistantMessage | BedrockToolResultMessage

HistoryMessage: TypeAlias = (
    OpenAiChatMessage | AnthropicMessage | OpenAiResponsesItem | GeminiContent | BedrockConverseMessage
)
"""A message of any format."""
