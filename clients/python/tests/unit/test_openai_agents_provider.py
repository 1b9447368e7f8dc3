"""The OpenAI Agents SDK adapter names the provider a round's reasoning is recorded through from the model the run
used: ``openai`` only for the SDK's OpenAI models, the host's ``provider=`` when it names one, and no reasoning at all
when it cannot tell (a LiteLLM model, another provider's ``Model``, an OpenAI-compatible endpoint elsewhere), rather
than a wrong provider's. Real runs of the SDK; its ScriptedModel gives the items."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from agents import (
    Agent,
    Model,
    ModelProvider,
    MultiProvider,
    OpenAIChatCompletionsModel,
    OpenAIProvider,
    OpenAIResponsesModel,
    RunConfig,
    function_tool,
)
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from hypothesis import given
from hypothesis import strategies as st
from openai import AsyncOpenAI
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from toolhistory.openai_agents import provider_of_model, recorded_run

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from toolhistory.events import ToolCall, ToolResult

NO_TRACING = RunConfig(tracing_disabled=True)


def openai_client(base_url: str | None = None) -> AsyncOpenAI:
    # Never called: the models are only looked at.
    return AsyncOpenAI(api_key="unused", **({"base_url": base_url} if base_url else {}))


class OtherProvidersModel(Model):
    """Another provider's ``Model`` (as a LiteLLM or a custom model is): the SDK's ScriptedModel gives its items."""

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        return await self.scripted.get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return self.scripted.stream_response(*args, **kwargs)


class OtherProvider(ModelProvider):
    def get_model(self, model_name: str | None) -> Model:
        return OtherProvidersModel(reasoning_round())


PROVIDER_CASES: list[tuple[str, object, object, str | None]] = [
    ("the SDK's default model", None, None, "openai"),
    ("a model name without a prefix", "gpt-5", None, "openai"),
    ("an openai/ model name", "openai/gpt-5", MultiProvider(), "openai"),
    ("a litellm/ model name", "litellm/anthropic/claude-opus-4-5", None, None),
    ("an any-llm/ model name", "any-llm/openrouter/openai/gpt-5", MultiProvider(), None),
    ("a model name under OpenAIProvider", "gpt-5", OpenAIProvider(api_key="unused"), "openai"),
    ("a model name under another ModelProvider", "gpt-5", OtherProvider(), None),
    ("OpenAIResponsesModel on OpenAI", OpenAIResponsesModel("gpt-5", openai_client()), None, "openai"),
    (
        "OpenAIChatCompletionsModel on Azure OpenAI",
        OpenAIChatCompletionsModel("gpt-5", openai_client("https://acme.openai.azure.com/openai/v1")),
        None,
        "openai",
    ),
    (
        "OpenAIChatCompletionsModel on Gemini's OpenAI-compatible endpoint",
        OpenAIChatCompletionsModel(
            "gemini-3-pro-preview", openai_client("https://generativelanguage.googleapis.com/v1beta/openai/")
        ),
        None,
        None,
    ),
    (
        "OpenAIResponsesModel on a local server",
        OpenAIResponsesModel("gpt-oss", openai_client("http://127.0.0.1:8000/v1")),
        None,
        None,
    ),
    ("the SDK's ScriptedModel", ScriptedModel([]), None, "openai"),
    ("another provider's Model", OtherProvidersModel(ScriptedModel([])), None, None),
]


@pytest.mark.parametrize(
    ("case", "model", "model_provider", "expected"), PROVIDER_CASES, ids=[c[0] for c in PROVIDER_CASES]
)
def test_the_provider_of_a_model(case: str, model: object, model_provider: object, expected: str | None) -> None:
    assert provider_of_model(model, model_provider) == expected, case


@given(
    prefix=st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True).filter(lambda p: p != "openai"),
    name=st.from_regex(r"[a-z0-9.-]{1,20}", fullmatch=True),
)
def test_a_model_name_is_openai_s_only_without_a_prefix_or_under_openai(prefix: str, name: str) -> None:
    assert provider_of_model(name) == "openai"
    assert provider_of_model(f"openai/{name}") == "openai"
    assert provider_of_model(f"{prefix}/{name}") is None


@dataclass
class PublishedRun:
    """A RunPublisher double: what the recorder asked to publish, in order."""

    events: list[tuple[str, Any]] = field(default_factory=list)

    def model_response(self, **fields: Any) -> object:
        self.events.append(("response", fields))
        return None

    def tool_calls(self, calls: Sequence[ToolCall]) -> list[object]:
        self.events.extend(("call", call) for call in calls)
        return []

    def tool_results(self, results: Sequence[ToolResult]) -> list[object]:
        self.events.extend(("result", result) for result in results)
        return []

    def complete(self, **fields: Any) -> object:
        self.events.append(("complete", fields))
        return None

    def fail(self, **fields: Any) -> object:
        self.events.append(("fail", fields))
        return None

    def of(self, kind: str) -> list[Any]:
        return [value for event, value in self.events if event == kind]


def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped"


def reasoning_round() -> ScriptedModel:
    return ScriptedModel(
        [
            ModelStep(
                output=[
                    ResponseReasoningItem(
                        id="rs_1",
                        type="reasoning",
                        summary=[Summary(text="Check the order.", type="summary_text")],
                        encrypted_content="opaque",
                    ),
                    assistant_message("I'll check.", item_id="msg_0"),
                    function_call("lookup_order", {"order_id": "A-1"}, call_id="call_a", item_id="fc_a"),
                ]
            ),
            ModelStep(output=[assistant_message("Shipped.", item_id="msg_1")]),
        ]
    )


async def recorded_response(agent_model: Model, **options: Any) -> list[Any]:
    run = PublishedRun()
    agent = Agent(name="support", model=agent_model, tools=[function_tool(lookup_order)])
    await recorded_run(run, agent, "where is A-1?", assistant_message_id="m", run_config=NO_TRACING, **options)
    assert len(run.of("call")) == 1
    return run.of("response")


@pytest.mark.parametrize(
    ("case", "model", "options", "expected_provider"),
    [
        ("the SDK's model: openai", lambda: reasoning_round(), {}, "openai"),
        ("another provider's model: nothing", lambda: OtherProvidersModel(reasoning_round()), {}, None),
        (
            "another provider's model named by the host",
            lambda: OtherProvidersModel(reasoning_round()),
            {"provider": "my-gateway"},
            "my-gateway",
        ),
        (
            "the host's name wins over the SDK's",
            lambda: reasoning_round(),
            {"provider": "azure-foundry"},
            "azure-foundry",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_a_round_s_reasoning_is_recorded_through_the_model_s_provider_or_not_at_all(
    case: str, model: Any, options: dict[str, Any], expected_provider: str | None
) -> None:
    responses = await recorded_response(model(), model="o4-mini", **options)
    if expected_provider is None:
        assert responses == [], case
    else:
        [response] = responses
        assert (response["provider"], response["model"], response["call_item_ids"]) == (
            expected_provider,
            "o4-mini",
            {"call_a": "fc_a"},
        ), case
