import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ModelMessage } from 'ai';

/* What the specs read of the AI SDK where its majors 6 and 7 differ (the adapter works with both). */

/**
 * The messages every step of a generateText call added, as a host keeps
 * them: AI SDK 7's `responseMessages` (its `response.messages` holds the
 * last step's only), AI SDK 6's `response.messages`.
 */
export function responseMessagesOf(result: object): ModelMessage[] {
  if ('responseMessages' in result) return result.responseMessages as ModelMessage[];
  return (result as { response: { messages: ModelMessage[] } }).response.messages;
}

/** The text the SDK sends the model for a tool that threw `new Error(message)`: AI SDK 6 its message, 7 its `toString()`. */
export function thrownErrorText(message: string): RegExp {
  const escaped = message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(Error: )?${escaped}$`);
}

/** The major version of the AI SDK the specs run with (the package the `ai` import resolves to). */
export function aiSdkMajor(): number {
  // `ai`'s main file is in its dist folder, one below the package.json.
  const packageJson = join(dirname(require.resolve('ai')), '..', 'package.json');
  return Number((JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version.split('.')[0]);
}
