import type { AgentInputItem, protocol } from '@openai/agents';
import type {
  OpenAiResponsesFunctionCall,
  OpenAiResponsesFunctionCallOutput,
  OpenAiResponsesOutputMessage,
  OpenAiResponsesReasoningItem,
} from '../../../domain/src/replay/provider-messages';
import { spliceHistory } from '../splice-history';

export type { OpenAiResponsesFunctionCall, OpenAiResponsesFunctionCallOutput, OpenAiResponsesOutputMessage, OpenAiResponsesReasoningItem };

/** A replayed item of the OpenAI Responses format: a round's reasoning item or text, a function call, or its output. */
export type ResponsesReplayItem =
  OpenAiResponsesReasoningItem | OpenAiResponsesOutputMessage | OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput;

/** The Agents SDK's items for a replayed round's reasoning, its text, a call and its output. */
export type ReplayedAgentItem =
  protocol.ReasoningItem | protocol.AssistantMessageItem | protocol.FunctionCallItem | protocol.FunctionCallResultItem;

/**
 * A replayed turn in the OpenAI Responses format: a turn of
 * getReplayHistory's answer for that format (its `messages`), or of the
 * GetReplayHistory response itself (its `messagesJson`).
 */
export interface ResponsesReplayTurn {
  /** The host's final assistant message of the run; empty when the run has none (failed, or still running). */
  assistantMessageId: string;
  /** The host's message that started the run; empty or absent when the producer gave none. */
  afterMessageId?: string;
  messages?: readonly unknown[];
  messagesJson?: string;
}

/**
 * The Agents SDK's input items for replayed Responses items, or for every
 * turn of a replay in that format, in order: a `reasoning` item becomes the
 * SDK's reasoning item (its summary as the content, its encrypted content in
 * the providerData the SDK sends back), a round's text its assistant
 * message, a `function_call` item the SDK's `function_call` item (`callId`,
 * and its `fc_` item id when replayed with its reasoning), a
 * `function_call_output` its `function_call_result` item, named by the call
 * it answers, its output the replayed text. So the SDK's next request gives
 * the model each reasoning item back right before its calls. Anything else
 * is refused: these are the tool segment of the OpenAI Responses format
 * only (ask getReplayHistory for that format, naming `model`). For a host that keeps no messages of
 * its own; historyInput places each turn among the host's.
 */
export function toAgentInputItems(replayed: readonly unknown[] | { turns: readonly ResponsesReplayTurn[] }): ReplayedAgentItem[] {
  if (!Array.isArray(replayed)) {
    return (replayed as { turns: readonly ResponsesReplayTurn[] }).turns.flatMap((turn, at) => toAgentInputItems(turnItems(turn, at)));
  }
  const names = new Map<string, string>();
  return replayed.map((item: unknown, at) => {
    if (isReasoningItem(item)) return reasoningItemOf(item);
    if (isOutputMessage(item)) {
      return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: item.content }] };
    }
    if (isFunctionCall(item)) {
      names.set(item.call_id, item.name);
      return {
        type: 'function_call',
        ...(typeof item.id === 'string' ? { id: item.id } : {}),
        callId: item.call_id,
        name: item.name,
        arguments: item.arguments,
        status: 'completed',
      };
    }
    if (isFunctionCallOutput(item)) {
      return {
        type: 'function_call_result',
        callId: item.call_id,
        // Replay puts every output after its call; the SDK itself names an output it cannot pair by its call id.
        name: names.get(item.call_id) ?? item.call_id,
        status: 'completed',
        output: { type: 'text', text: item.output },
      };
    }
    throw new TypeError(
      `item ${at} is not an OpenAI Responses reasoning, assistant message, function_call or function_call_output item ` +
        `(${JSON.stringify(item)?.slice(0, 120)}): replay the history in the openai-responses format`,
    );
  });
}

/**
 * The input for the SDK's run(): the host's own items with each replayed
 * turn's calls and outputs where the model saw them (see spliceHistory):
 * right before the host's item whose id is the turn's assistantMessageId
 * (the run's final answer), left out when the host no longer has it; a
 * turn without one (a failed or running run) right after its
 * afterMessageId item, else after the last one. `idOf` gives an item's id;
 * default: the item's own `id` (the id the model gave an assistant message,
 * which is what the recorder records as the assistantMessageId by default).
 * Append the new user message after it.
 */
export function historyInput<H = AgentInputItem>(
  history: { turns: readonly ResponsesReplayTurn[] },
  hostItems: readonly H[] = [],
  idOf: (item: H) => string | undefined = defaultIdOf,
): Array<H | ReplayedAgentItem> {
  const turns = history.turns.map((turn, at) => ({
    assistantMessageId: turn.assistantMessageId,
    afterMessageId: turn.afterMessageId,
    messages: toAgentInputItems(turnItems(turn, at)),
  }));
  return spliceHistory(hostItems, turns, idOf);
}

function turnItems(turn: ResponsesReplayTurn, at: number): readonly unknown[] {
  if (Array.isArray(turn.messages)) return turn.messages;
  const parsed: unknown = JSON.parse(turn.messagesJson || '[]');
  if (!Array.isArray(parsed)) throw new TypeError(`turn ${at}: messagesJson is not a JSON array`);
  return parsed;
}

function defaultIdOf(item: unknown): string | undefined {
  const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** The SDK's reasoning item, as its Responses model would have made it of the API's. */
function reasoningItemOf(item: OpenAiResponsesReasoningItem): protocol.ReasoningItem {
  const encrypted = item.encrypted_content;
  return {
    type: 'reasoning',
    id: item.id,
    content: item.summary.map((part) => ({ type: 'input_text', text: part.text })),
    ...(item.content === undefined ? {} : { rawContent: item.content.map((part) => ({ type: 'reasoning_text', text: part.text })) }),
    ...(typeof encrypted === 'string' ? { providerData: { encrypted_content: encrypted } } : {}),
  };
}

function isReasoningItem(item: unknown): item is OpenAiResponsesReasoningItem {
  const reasoning = item as Partial<OpenAiResponsesReasoningItem> | null;
  return (
    typeof reasoning === 'object' &&
    reasoning !== null &&
    reasoning.type === 'reasoning' &&
    typeof reasoning.id === 'string' &&
    Array.isArray(reasoning.summary)
  );
}

function isOutputMessage(item: unknown): item is OpenAiResponsesOutputMessage {
  const message = item as Partial<OpenAiResponsesOutputMessage> | null;
  return (
    typeof message === 'object' &&
    message !== null &&
    message.type === 'message' &&
    message.role === 'assistant' &&
    typeof message.content === 'string'
  );
}

function isFunctionCall(item: unknown): item is OpenAiResponsesFunctionCall {
  const call = item as Partial<OpenAiResponsesFunctionCall> | null;
  return (
    typeof call === 'object' &&
    call !== null &&
    call.type === 'function_call' &&
    typeof call.call_id === 'string' &&
    typeof call.name === 'string' &&
    typeof call.arguments === 'string'
  );
}

function isFunctionCallOutput(item: unknown): item is OpenAiResponsesFunctionCallOutput {
  const output = item as Partial<OpenAiResponsesFunctionCallOutput> | null;
  return (
    typeof output === 'object' &&
    output !== null &&
    output.type === 'function_call_output' &&
    typeof output.call_id === 'string' &&
    typeof output.output === 'string'
  );
}
