import type { Response as ResponsesApiResponse, ResponseInputItem } from 'openai/resources/responses/responses';
import { tokenCount } from '../recording/contract-fit';
import type { ResponseReasoning } from '../recording/recorded-run';
import type { JsonObject, TokenUsage } from '../tool-event-types';
import { type OpenAiRecordedToolCall, type OpenAiToolOutput, parseToolArguments, toolMessageContent } from './openai-completion-mapper';

/** A response of the Responses API (`client.responses.create`), as the SDK returns it. */
export type OpenAiResponse = ResponsesApiResponse;

/** What one response holds for the run: its function calls (a round), the reasoning items and item ids that go back with them, its text and tokens. */
export interface OpenAiResponseRound {
  calls: OpenAiRecordedToolCall[];
  /** Its reasoning items, each as the API returned it, and each function call's `fc_` id: replayed to OpenAI only, in their place. */
  reasoning?: ResponseReasoning;
  /** The text of its messages beside the calls. */
  text?: string;
  usage?: TokenUsage;
}

export function isOpenAiResponse(value: object): value is OpenAiResponse {
  return (value as { object?: unknown }).object === 'response' && Array.isArray((value as { output?: unknown }).output);
}

/**
 * A response's output as a round: its `function_call` items in order (the
 * calls the client runs), its `reasoning` items (which the API wants back,
 * right before those calls, in the next request of the turn: with
 * `encrypted_content` when nothing is stored at OpenAI), and each call's
 * item id, which the API refuses without its reasoning item.
 */
export function responseRoundOf(response: OpenAiResponse): OpenAiResponseRound {
  const functionCalls = response.output.flatMap((item) => (item.type === 'function_call' ? [item] : []));
  const calls = functionCalls.map((item, sequenceIndex) => ({
    sequenceIndex,
    toolCallId: item.call_id,
    toolName: item.name,
    arguments: parseToolArguments(item.arguments ?? ''),
  }));
  // As JSON, as the API sent it (the SDK parses no item): key order kept, nothing undefined.
  const items = response.output.flatMap((item) => (item.type === 'reasoning' ? [JSON.parse(JSON.stringify(item)) as JsonObject] : []));
  const callItemIds = Object.fromEntries(functionCalls.flatMap((item) => (item.id ? [[item.call_id, item.id]] : [])));
  const hasState = items.length > 0 || Object.keys(callItemIds).length > 0;
  const text = responseTextOf(response);
  const usage = responseUsageOf(response);
  return {
    calls,
    ...(calls.length > 0 && hasState
      ? {
          reasoning: {
            provider: 'openai',
            model: response.model,
            ...(items.length === 0 ? {} : { items }),
            ...(Object.keys(callItemIds).length === 0 ? {} : { callItemIds }),
          },
        }
      : {}),
    ...(text === '' ? {} : { text }),
    ...(usage === undefined ? {} : { usage }),
  };
}

/** The text of the response's assistant messages (their output_text parts; a refusal is no text). */
export function responseTextOf(response: OpenAiResponse): string {
  return response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

/** `stop` when the response asked for no function call (it answered), `tool_limit` when it still did. */
export function responseFinishReasonOf(response: OpenAiResponse): string {
  return response.output.some((item) => item.type === 'function_call') ? 'tool_limit' : 'stop';
}

export function responseUsageOf(response: OpenAiResponse): TokenUsage | undefined {
  if (!response.usage) return undefined;
  return {
    inputTokens: tokenCount(response.usage.input_tokens),
    outputTokens: tokenCount(response.usage.output_tokens),
    ...(response.model ? { model: response.model } : {}),
  };
}

/** The function_call_output input item that gives the model a call's output. */
export function functionCallOutputItem(callId: string, output: OpenAiToolOutput): ResponseInputItem.FunctionCallOutput {
  return { type: 'function_call_output', call_id: callId, output: toolMessageContent(output) };
}
