import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, type AIMessageFields, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { type PublishedEvent, RunPublisher } from '../tool-event-publisher';

/** One scripted model call: the AI message to return, an error to throw, or a function of the messages the model got. */
export type ScriptedReply = AIMessageFields | Error | ((messages: BaseMessage[]) => AIMessageFields | Error);

export const SCRIPTED_MODEL_NAME = 'scripted-model';

/**
 * A chat model for tests that can call tools (LangChain's fake chat models
 * cannot emit a sequence of tool-call messages): it answers each call with
 * the next scripted reply and keeps every message list it was given.
 * bindTools keeps the model itself, so the test still sees what it got.
 */
export class ScriptedChatModel extends BaseChatModel {
  /** The messages of each call, in call order. */
  readonly received: BaseMessage[][] = [];
  /** The names of the tools the agent bound. */
  boundTools: string[] = [];
  private calls = 0;

  /** `outputVersion: "v1"`: LangChain's base chat model turns each reply into its standard content blocks, as it does for every integration set so. */
  constructor(
    private readonly replies: readonly ScriptedReply[],
    options: { outputVersion?: 'v0' | 'v1' } = {},
  ) {
    super(options);
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(tools: BindToolsInput[]): this {
    this.boundTools = tools.map((tool) => String((tool as { name?: unknown }).name));
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.received.push([...messages]);
    const scripted = this.replies[this.calls++];
    if (scripted === undefined) throw new Error(`ScriptedChatModel: no reply scripted for call ${this.calls}`);
    const reply = typeof scripted === 'function' ? scripted(messages) : scripted;
    if (reply instanceof Error) throw reply;
    const message = new AIMessage({ ...reply, response_metadata: { model_name: SCRIPTED_MODEL_NAME, ...reply.response_metadata } });
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

export const getOrder = tool(async ({ orderId }: { orderId: string }) => `order ${orderId}: shipped`, {
  name: 'get_order',
  description: 'Looks an order up.',
  schema: z.object({ orderId: z.string() }),
});
export const getCustomer = tool(async ({ id }: { id: number }) => ({ id, name: 'Ada' }), {
  name: 'get_customer',
  description: 'Looks a customer up.',
  schema: z.object({ id: z.number() }),
});
export const chargeCard = tool(
  async (): Promise<string> => {
    throw new Error('card declined');
  },
  { name: 'charge_card', description: 'Charges the card.', schema: z.object({ amount: z.number() }) },
);
/** The tools both the unit and the end-to-end tests give the agent: two that answer, one that throws. */
export const tools = [getOrder, getCustomer, chargeCard];

export const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args, type: 'tool_call' as const });
export const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output, total_tokens: input + output });

/** A run publisher whose published events are kept, each with its own fields, instead of going to a broker. */
export function recordingRun(): { events: Array<Record<string, unknown>>; run: RunPublisher } {
  const events: Array<Record<string, unknown>> = [];
  const run = new RunPublisher({ tenantId: 't1', conversationId: 'c1', channel: 'web', runId: 'run-1' }, async (batch) =>
    batch.map(({ identity, fields }): PublishedEvent => {
      events.push({ type: identity.type, ...fields });
      return { eventId: `e${events.length}`, type: identity.type, partition: 0, offset: '0', consistencyToken: 'ct1:k:t:0:0' };
    }),
  );
  return { events, run };
}
