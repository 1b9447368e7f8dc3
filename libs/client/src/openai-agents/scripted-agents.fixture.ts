import { type AgentOutputItem, type ModelResponse, setTracingDisabled, tool, Usage } from '@openai/agents';
import { assistantMessage, functionCall } from '@openai/agents/testing';
import { toolErrorFunction } from './agents-tool-errors';

// The SDK's tracing would export to OpenAI: nothing leaves the machine in a test.
setTracingDisabled(true);

export { assistantMessage, functionCall };

let responseNumber = 0;

/** A model response as a provider's model returns it: its output items, its tokens, an id, and the raw response naming the model. */
export function response(output: AgentOutputItem[], [inputTokens, outputTokens]: [number, number]): ModelResponse {
  return {
    output,
    usage: new Usage({ requests: 1, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }),
    responseId: `resp_${++responseNumber}`,
    providerData: { model: 'gpt-test-1' },
  };
}

const object = (properties: Record<string, object>) => ({
  type: 'object' as const,
  properties,
  required: Object.keys(properties),
  additionalProperties: false as const,
});

/** JSON output: the SDK sends the model its JSON text. */
export const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: object({ city: { type: 'string' } }),
  strict: true,
  execute: async (input) => {
    const { city } = input as { city: string };
    return { city, tempC: city === 'Paris' ? 18 : 12, sky: 'rain' };
  },
});

/** Text output. */
export const suggestPacking = tool({
  name: 'suggest_packing',
  description: 'What to pack for some temperatures.',
  parameters: object({ tempsC: { type: 'array', items: { type: 'number' } } }),
  strict: true,
  execute: async (input) => `umbrella and a scarf for ${JSON.stringify((input as { tempsC: number[] }).tempsC)}`,
});

/** Throws: the SDK's default errorFunction sends the model its fixed error text. */
export const searchFlights = tool({
  name: 'search_flights',
  description: 'Flights to a city.',
  parameters: object({ to: { type: 'string' } }),
  strict: true,
  execute: async (input) => {
    throw new Error(`no route to ${(input as { to: string }).to}`);
  },
});

/** Throws, and tells the model why: its output is marked as an error by toolErrorFunction. */
export const bookHotel = tool({
  name: 'book_hotel',
  description: 'Books a hotel.',
  parameters: object({ city: { type: 'string' } }),
  strict: true,
  execute: async () => {
    throw new Error('fully booked');
  },
  errorFunction: toolErrorFunction((error) => `booking failed: ${(error as Error).message}`),
});

/** Needs a person's approval before it runs. */
export const refund = tool({
  name: 'refund',
  description: 'Refunds an order.',
  parameters: object({ orderId: { type: 'string' }, amountEur: { type: 'number' } }),
  strict: true,
  needsApproval: true,
  execute: async (input) => {
    const { orderId, amountEur } = input as { orderId: string; amountEur: number };
    return `refunded ${amountEur} EUR on ${orderId}`;
  },
});

export const ALL_TOOLS = [getWeather, suggestPacking, searchFlights, bookHotel, refund];
