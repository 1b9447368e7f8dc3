"""The run hooks the recorder gives ``Runner.run``: they see each model response and tool output as the run goes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agents import Agent, ModelResponse, RunContextWrapper, RunHooks, Tool, TResponseInputItem

from toolhistory.openai_agents._record import ObservedOutput

if TYPE_CHECKING:
    from agents.run_context import AgentHookContext


class RecordingHooks(RunHooks[Any]):
    """Sees each model response and tool output as the run goes (for a failed run's record), and
    passes every callback on to the host's own hooks."""

    def __init__(
        self,
        host: RunHooks[Any] | None,
        model_name: Callable[[Agent[Any]], str | None],
        provider_name: Callable[[Agent[Any]], str | None],
    ) -> None:
        self.host = host
        self.model_name = model_name
        self.provider_name = provider_name
        self.responses: list[ModelResponse] = []
        self.models: dict[int, str | None] = {}
        self.providers: dict[int, str | None] = {}
        self.outputs: list[ObservedOutput] = []

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        if self.host is not None:
            await self.host.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        self.responses.append(response)
        self.models[id(response)] = self.model_name(agent)
        self.providers[id(response)] = self.provider_name(agent)
        if self.host is not None:
            await self.host.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.host is not None:
            await self.host.on_agent_start(context, agent)

    async def on_agent_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        if self.host is not None:
            await self.host.on_agent_end(context, agent, output)

    async def on_handoff(self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]) -> None:
        if self.host is not None:
            await self.host.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        if self.host is not None:
            await self.host.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        call_id = getattr(context, "tool_call_id", None)
        if isinstance(call_id, str):
            self.outputs.append(ObservedOutput(call_id, result))
        if self.host is not None:
            await self.host.on_tool_end(context, agent, tool, result)
