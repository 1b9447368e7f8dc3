"""The package README's examples run as written against the service.

Each example's code block (PydanticAI, the OpenAI Agents SDK's session, Google ADK, Microsoft Agent Framework) is taken
from README.md and run whole, its two turns back to back with no polling: the second turn's model must see the first
turn's calls. Only what a reader fills in for their own deployment is replaced: the model (a scripted one: CI has no
provider), the addresses, the token and TLS, the tenant the token may use, and the conversation id (unique per run).
Each of these must be in the block, so an example that changes its shape fails here instead of running something else.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import Stack

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"


def python_block_under(heading: str) -> str:
    """The first ```python block of the README's section `heading` (a `## ` heading)."""
    text = README.read_text("utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    block = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert block is not None, f"no python block under ## {heading} in README.md"
    return block.group(1)


def filled_in(code: str, placeholders: dict[str, str]) -> str:
    for placeholder, value in placeholders.items():
        assert placeholder in code, f"the README's example no longer has {placeholder}"
        code = code.replace(placeholder, value)
    return code


def _user_prompt(message: ModelMessage) -> str | None:
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return None


def test_the_pydantic_ai_example_runs_two_turns_back_to_back_and_the_second_sees_the_first(
    stack: Stack, ids: Callable[[str], str]
) -> None:
    seen_by_turn_2: list[list[ModelMessage]] = []

    def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Turn 1 looks the order up and charges the card (declined), then answers; turn 2 answers at once."""
        question = _user_prompt(messages[-1])
        if question == "Where is A-1? And charge me 30.":
            return ModelResponse(
                parts=[
                    ToolCallPart("lookup_order", {"order_id": "A-1"}, tool_call_id="call_lookup"),
                    ToolCallPart("charge_card", {"amount": 30}, tool_call_id="call_charge"),
                ]
            )
        if question == "Try the charge again?":
            seen_by_turn_2.append(list(messages))
            return ModelResponse(parts=[TextPart("I will not retry a declined card without your say-so.")])
        return ModelResponse(parts=[TextPart("A-1 has shipped; the card was declined.")])

    tls = "False"
    namespace: dict[str, Any] = {
        "__name__": "readme_pydantic_ai",
        "README_MODEL": FunctionModel(scripted),
        "README_TLS": False,
    }
    if stack.tls is not None:
        namespace["README_TLS"] = stack.tls
        tls = "README_TLS"
    code = filled_in(
        python_block_under("PydanticAI"),
        {
            '"openai:gpt-5"': "README_MODEL",
            'brokers="kafka:9092"': f"brokers={','.join(stack.brokers)!r}, topic={stack.topic!r}",
            '"toolhistory:50051"': repr(stack.address),
            'token="..."': f"token={stack.token!r}",
            "tls=True": f"tls={tls}",
            '"acme"': repr(stack.tenant),
            '"conv-42"': repr(ids("readme-pydantic-ai")),
        },
    )
    assert "asyncio.run(main())" in code
    assert re.search(r"\bsleep\b|\bwhile\b", code) is None, "the example must not wait for recording itself"

    exec(compile(code, f"{README}: ## PydanticAI", "exec"), namespace)  # runs both turns

    (sent,) = seen_by_turn_2
    calls = [p for m in sent if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == [
        ("lookup_order", {"order_id": "A-1"}),
        ("charge_card", {"amount": 30}),
    ]
    answers = {
        p.tool_name: p
        for m in sent
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    }
    assert set(answers) == {"lookup_order", "charge_card"}
    assert isinstance(answers["lookup_order"], ToolReturnPart)
    assert answers["lookup_order"].model_response_object() == {"order_id": "A-1", "status": "shipped"}
    declined = answers["charge_card"]
    declined_text = declined.model_response() if isinstance(declined, RetryPromptPart) else str(declined.content)
    assert "card declined for 30" in declined_text
    # In the host's order: question 1, the replayed round, answer 1, question 2.
    assert [_user_prompt(m) for m in sent if _user_prompt(m) is not None] == [
        "Where is A-1? And charge me 30.",
        "Try the charge again?",
    ]
    texts = [p.content for m in sent if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, TextPart)]
    assert texts == ["A-1 has shipped; the card was declined."]


def test_the_openai_agents_session_example_runs_two_turns_and_the_second_sees_the_first(
    stack: Stack, ids: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.testing import ScriptedModel, assistant_message, function_call

    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # CI has no provider to export traces to
    lookup = ids("call_lookup")
    model = ScriptedModel(
        [
            [function_call("lookup_order", {"order_id": "A-1"}, call_id=lookup)],
            [assistant_message("A-1 has shipped.", item_id="msg-answer-1")],
            [assistant_message("It is on its way.", item_id="msg-answer-2")],
        ]
    )
    namespace: dict[str, Any] = {"__name__": "readme_openai_agents", "README_MODEL": model, "README_TLS": False}
    tls = "False"
    if stack.tls is not None:
        namespace["README_TLS"] = stack.tls
        tls = "README_TLS"
    code = filled_in(
        python_block_under("The OpenAI Agents SDK"),
        {
            '"gpt-4.1"': "README_MODEL",
            'brokers="kafka:9092"': f"brokers={','.join(stack.brokers)!r}, topic={stack.topic!r}",
            '"toolhistory:50051"': repr(stack.address),
            'token="..."': f"token={stack.token!r}",
            "tls=True": f"tls={tls}",
            '"acme"': repr(stack.tenant),
            '"conv-42"': repr(ids("readme-openai-agents")),
            '"conversations.db"': repr(str(tmp_path / "conversations.db")),
        },
    )
    assert "asyncio.run(main())" in code
    assert re.search(r"\bsleep\b|\bwhile\b", code) is None, "the example must not wait for recording itself"

    exec(compile(code, f"{README}: ## The OpenAI Agents SDK", "exec"), namespace)  # runs both turns

    turn_2 = model.calls[-1].input
    assert [item.get("type") for item in turn_2 if isinstance(item, dict) and "call_id" in item] == [
        "function_call",
        "function_call_output",
    ]
    assert [item.get("content") for item in turn_2 if isinstance(item, dict) and item.get("role") == "user"] == [
        "Where is order A-1?",
        "Has it arrived yet?",
    ]


def test_the_adk_example_runs_two_turns_back_to_back_and_the_second_sees_the_first(
    stack: Stack, ids: Callable[[str], str]
) -> None:
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    seen_by_turn_2: list[list[types.Content]] = []

    class ScriptedGemini(BaseLlm):
        """Turn 1 looks the order up and charges the card (declined), then answers; turn 2 answers at once."""

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
            contents = llm_request.contents
            asked = [p.text for c in contents if c.role == "user" for p in c.parts or [] if p.text]
            answered = any(p.function_response for p in contents[-1].parts or [])
            if asked[-1] == "Try the charge again?":
                seen_by_turn_2.append(list(contents))
                parts = [types.Part(text="I will not retry a declined card without your say-so.")]
            elif answered:
                parts = [types.Part(text="A-1 has shipped; the card was declined.")]
            else:
                parts = [
                    types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order_id": "A-1"})),
                    types.Part(function_call=types.FunctionCall(name="charge_card", args={"amount": 30})),
                ]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    tls = "False"
    namespace: dict[str, Any] = {
        "__name__": "readme_adk",
        "README_MODEL": ScriptedGemini(model="scripted"),
        "README_TLS": False,
    }
    if stack.tls is not None:
        namespace["README_TLS"] = stack.tls
        tls = "README_TLS"
    code = filled_in(
        python_block_under("Google ADK"),
        {
            'model="gemini-2.5-flash"': "model=README_MODEL",
            'brokers="kafka:9092"': f"brokers={','.join(stack.brokers)!r}, topic={stack.topic!r}",
            '"toolhistory:50051"': repr(stack.address),
            'token="..."': f"token={stack.token!r}",
            "tls=True": f"tls={tls}",
            '"acme"': repr(stack.tenant),
            '"conv-42"': repr(ids("readme-adk")),
        },
    )
    assert "asyncio.run(main())" in code
    assert re.search(r"\bsleep\b|\bwhile\b", code) is None, "the example must not wait for recording itself"

    exec(compile(code, f"{README}: ## Google ADK", "exec"), namespace)  # runs both turns

    (sent,) = seen_by_turn_2
    calls = [p.function_call for c in sent for p in c.parts or [] if p.function_call]
    assert [(c.name, c.args) for c in calls] == [("lookup_order", {"order_id": "A-1"}), ("charge_card", {"amount": 30})]
    responses = [p.function_response for c in sent for p in c.parts or [] if p.function_response]
    assert [r.response for r in responses] == [
        {"order_id": "A-1", "status": "shipped"},
        {"error": "card declined for 30"},
    ]
    # In the host's order: question 1, the replayed round, answer 1, question 2.
    texts = [(c.role, p.text) for c in sent for p in c.parts or [] if p.text]
    assert texts == [
        ("user", "Where is A-1? And charge me 30."),
        ("model", "A-1 has shipped; the card was declined."),
        ("user", "Try the charge again?"),
    ]
    roles = [c.role for c in sent]
    assert roles == ["user", "model", "user", "model", "user"]


def test_the_agent_framework_example_runs_two_turns_and_the_second_sees_the_first(
    stack: Stack, ids: Callable[[str], str]
) -> None:
    from agent_framework import (
        BaseChatClient,
        ChatMiddlewareLayer,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
    )

    seen_by_turn_2: list[list[Message]] = []

    class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
        """Turn 1 looks the order up and charges the card (it fails), then answers; turn 2 answers at once."""

        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            return self._respond(list(messages))

        async def _respond(self, messages: list[Message]) -> ChatResponse:
            asked = [m.text for m in messages if m.role == "user"]
            if asked[-1] == "Try the charge again?":
                seen_by_turn_2.append(messages)
                contents = [Content.from_text("I will not retry a failed charge without your say-so.")]
            elif messages[-1].role == "tool":
                contents = [Content.from_text("A-1 has shipped; the charge failed.")]
            else:
                contents = [
                    Content.from_function_call("call-1", "lookup_order", arguments={"order_id": "A-1"}),
                    Content.from_function_call("call-2", "charge_card", arguments={"amount": 30}),
                ]
            return ChatResponse(messages=[Message("assistant", contents)])

    tls = "False"
    namespace: dict[str, Any] = {
        "__name__": "readme_agent_framework",
        "README_MODEL": ScriptedChatClient(),
        "README_TLS": False,
    }
    if stack.tls is not None:
        namespace["README_TLS"] = stack.tls
        tls = "README_TLS"
    code = filled_in(
        python_block_under("Microsoft Agent Framework"),
        {
            'OpenAIChatClient(model="gpt-4.1")': "README_MODEL",
            'brokers="kafka:9092"': f"brokers={','.join(stack.brokers)!r}, topic={stack.topic!r}",
            '"toolhistory:50051"': repr(stack.address),
            'token="..."': f"token={stack.token!r}",
            "tls=True": f"tls={tls}",
            '"acme"': repr(stack.tenant),
            '"conv-42"': repr(ids("readme-maf")),
        },
    )
    assert "asyncio.run(main())" in code
    assert re.search(r"\bsleep\b|\bwhile\b", code) is None, "the example must not wait for recording itself"

    exec(compile(code, f"{README}: ## Microsoft Agent Framework", "exec"), namespace)  # runs both turns

    (sent,) = seen_by_turn_2
    calls = [c for m in sent for c in m.contents if c.type == "function_call"]
    assert [(c.name, c.parse_arguments()) for c in calls] == [
        ("lookup_order", {"order_id": "A-1"}),
        ("charge_card", {"amount": 30}),
    ]
    results = [c.result for m in sent for c in m.contents if c.type == "function_result"]
    assert results == ["A-1: shipped", "Error: Function failed."]
    # In the host's order: question 1, the replayed round, answer 1, question 2.
    assert [m.role for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert [m.text for m in sent if m.role != "tool" and m.text] == [
        "Where is A-1? And charge me 30.",
        "A-1 has shipped; the charge failed.",
        "Try the charge again?",
    ]
