import type { StepResult, ToolResultPart, ToolSet } from 'ai';
// Plain files of the contract with no imports of their own: bundled into the package when it is built.
import { jsonDepth } from '../../../contract/src/json-depth';
import { MAX_JSON_DEPTH } from '../../../contract/src/tool-event.types';
import { providerOfAiSdkMetadataKey, providerOfAiSdkModel, reasoningOfAiSdkParts } from '../ai-sdk-reasoning';
import { abortedFailure, errorText, fittedFailure, isAbortError, isErrorLike } from '../recording/contract-fit';
import type { ResponseReasoning } from '../recording/recorded-run';
import type { JsonObject, JsonValue, RunFailureDetail, TokenUsage } from '../tool-event-types';

/** One tool call of a step, as recorded: the call the model made and, once the tool ran, what the model was sent back. */
export interface StepInvocation {
  sequenceIndex: number;
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  /** Absent when the loop ended before the tool ran (no `execute`, approval pending). */
  result?: { value: JsonValue; isError: boolean };
  /** Set when the tool needs a person's approval first (`needsApproval`): the id of the SDK's tool-approval-request. */
  approvalId?: string;
}

/** The longest failure message a RunFailed carries: provider errors may quote whole response bodies. */
export { MAX_FAILURE_MESSAGE_LENGTH } from '../recording/contract-fit';

/**
 * The round a step asked for: its client-executed tool calls in the order
 * the model gave them, each with its result. Provider-executed calls (a
 * provider's own web search, say) are part of the model's answer, not a
 * round the client ran, so they are left out.
 */
export function stepInvocations<TOOLS extends ToolSet>(step: StepResult<TOOLS>): StepInvocation[] {
  const calls = step.toolCalls.filter((call) => call.providerExecuted !== true);
  return calls.map((call, sequenceIndex) => {
    const result = resultOf(step, call.toolCallId);
    const approval = step.content.find((part) => part.type === 'tool-approval-request' && part.toolCall.toolCallId === call.toolCallId);
    return {
      sequenceIndex,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      arguments: argumentsOf(call.input),
      ...(result === undefined ? {} : { result }),
      ...(approval?.type === 'tool-approval-request' ? { approvalId: approval.approvalId } : {}),
    };
  });
}

/**
 * The reasoning state the step's provider handed back with its calls, as
 * the provider's own items (see ai-sdk-reasoning.ts): its reasoning parts,
 * Gemini's signatures and OpenAI's item ids on its tool calls. The provider
 * is the one whose metadata the parts carry, else the model's; undefined
 * when the step holds none of a provider the client knows.
 */
export function stepReasoning<TOOLS extends ToolSet>(step: StepResult<TOOLS>): ResponseReasoning | undefined {
  const reasoning = step.content.flatMap((part) => (part.type === 'reasoning' ? [part] : []));
  const calls = step.toolCalls.filter((call) => call.providerExecuted !== true);
  const keys = [...reasoning, ...calls].flatMap((part) => Object.keys(part.providerMetadata ?? {}));
  const provider = keys.map(providerOfAiSdkMetadataKey).find((known) => known !== undefined) ?? providerOfAiSdkModel(step.model.provider);
  if (provider === undefined) return undefined;
  const { items, callSignatures, callItemIds } = reasoningOfAiSdkParts(provider, reasoning, calls);
  if (items.length === 0 && Object.keys(callSignatures).length === 0 && Object.keys(callItemIds).length === 0) return undefined;
  return {
    provider,
    model: step.response.modelId || step.model.modelId,
    ...(items.length === 0 ? {} : { items }),
    ...(Object.keys(callSignatures).length === 0 ? {} : { callSignatures }),
    ...(Object.keys(callItemIds).length === 0 ? {} : { callItemIds }),
  };
}

/** Whether the step asked for tools the client ran: only such a step is a round. */
export function isRound<TOOLS extends ToolSet>(step: StepResult<TOOLS>): boolean {
  return step.toolCalls.some((call) => call.providerExecuted !== true);
}

/**
 * `stop` when the model was called again after the last round's results
 * (the last step asked for no tools), so they reached it; otherwise
 * `tool_limit`, as the package's other adapters say: the loop ended right
 * after the tools (a stop condition such as stepCountIs), or before they
 * ran (no `execute`, approval pending).
 */
export function runFinishReason<TOOLS extends ToolSet>(steps: readonly StepResult<TOOLS>[]): 'stop' | 'tool_limit' {
  const last = steps.at(-1);
  return last !== undefined && isRound(last) ? 'tool_limit' : 'stop';
}

/** One entry per model call of the run, in call order; a provider that reports no count counts 0. */
export function stepUsage<TOOLS extends ToolSet>(steps: readonly StepResult<TOOLS>[]): TokenUsage[] {
  return steps.map((step) => {
    const model = step.response.modelId || step.model.modelId;
    return {
      inputTokens: step.usage.inputTokens ?? 0,
      outputTokens: step.usage.outputTokens ?? 0,
      ...(model ? { model: model.slice(0, 256) } : {}),
    };
  });
}

/** A RunFailed's error for what the call threw: `aborted` for a cancelled call, else the error's name (AI_APICallError, ...). */
export function runFailure(error: unknown): RunFailureDetail {
  if (isAbortError(error)) return abortedFailure(errorText(error));
  return fittedFailure((isErrorLike(error) ? error.name : '') || 'error', errorText(error));
}

/** An error as the AI SDK shows it to the model (its getErrorMessage): a tool error's result is this text. */
export { errorText } from '../recording/contract-fit';

/**
 * The result as the model was sent it: the tool-result part of the step's
 * tool message, which already applies the tool's `toModelOutput` and the
 * SDK's error text. Looked up only when the step itself holds a result for
 * the call, since the response messages accumulate over the whole loop.
 */
function resultOf<TOOLS extends ToolSet>(step: StepResult<TOOLS>, toolCallId: string): StepInvocation['result'] {
  for (const part of step.content) {
    if (part.type !== 'tool-result' && part.type !== 'tool-error') continue;
    if (part.toolCallId !== toolCallId || (part.type === 'tool-result' && part.preliminary === true)) continue;
    const sent = sentOutput(step, toolCallId);
    if (sent !== undefined) return fromModelOutput(sent);
    return part.type === 'tool-error'
      ? { value: errorText(part.error), isError: true }
      : { value: resultValue(part.output), isError: false };
  }
  return undefined;
}

function sentOutput<TOOLS extends ToolSet>(step: StepResult<TOOLS>, toolCallId: string): ToolResultPart['output'] | undefined {
  for (let i = step.response.messages.length - 1; i >= 0; i--) {
    const message = step.response.messages[i];
    if (message.role !== 'tool') continue;
    const part = message.content.find((content) => content.type === 'tool-result' && content.toolCallId === toolCallId);
    if (part?.type === 'tool-result') return part.output;
  }
  return undefined;
}

/** A tool-result part's output as recorded: its value, or its text for an error or a denial. */
export function fromModelOutput(output: ToolResultPart['output']): NonNullable<StepInvocation['result']> {
  switch (output.type) {
    case 'text':
      return { value: output.value, isError: false };
    case 'error-text':
      return { value: output.value, isError: true };
    case 'json':
      return { value: resultValue(output.value), isError: false };
    case 'error-json':
      return { value: resultValue(output.value), isError: true };
    case 'execution-denied':
      return { value: output.reason ?? 'Tool execution denied.', isError: true };
    default:
      // `content` (text and media parts), and any kind a later SDK adds: kept as the JSON it is.
      return { value: resultValue((output as { value?: unknown }).value), isError: false };
  }
}

/**
 * The call's input as the JSON object the contract wants. Input the SDK
 * could not parse (it is then the model's raw text), or that is no object,
 * or nests deeper than the contract allows, is kept as `{"_raw": text}`,
 * as the package's other adapters keep it, rather than failing the run.
 */
function argumentsOf(input: unknown): JsonObject {
  const json = toJson(input);
  if (json === null || json === '') return {};
  if (typeof json === 'object' && !Array.isArray(json) && jsonDepth(json, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return json;
  return { _raw: typeof json === 'string' ? json : JSON.stringify(json) };
}

/** A result as JSON; the contract refuses null, so an empty result reads as the model saw it, `null`, and a too deep one as its JSON text. */
function resultValue(output: unknown): JsonValue {
  const json = toJson(output);
  if (json === null) return 'null';
  return jsonDepth(json, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH ? json : JSON.stringify(json);
}

/** JSON as it goes over the wire (Dates as strings, undefined fields dropped); what cannot be serialized becomes its text. */
function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as JsonValue);
  } catch {
    return String(value);
  }
}
