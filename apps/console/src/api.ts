import type { ApiErrorView } from '@toolhistory/console-api';

const TOKEN_KEY = 'toolhistory.token';

/** The bearer token lives in this tab's session storage only: gone when the tab closes. */
export const savedToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);
export const saveToken = (token: string): void => sessionStorage.setItem(TOKEN_KEY, token.trim());
export const forgetToken = (): void => sessionStorage.removeItem(TOKEN_KEY);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** GET a JSON route of the API with the saved token; an error answer becomes an ApiError naming what was wrong. */
export async function getJson<T>(path: string, params: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<T> {
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const token = savedToken();
  const response = await fetch(`/api/v1/${path}${query.size > 0 ? `?${query}` : ''}`, {
    headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    signal,
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as Partial<ApiErrorView> | null;
    throw new ApiError(response.status, body?.code ?? String(response.status), body?.message ?? response.statusText);
  }
  return (await response.json()) as T;
}

export const segment = (value: string): string => encodeURIComponent(value);

/**
 * Follows a server-sent-events route of the API with the saved token (a
 * fetch, not EventSource: EventSource cannot send the bearer header, and
 * the token never goes into a URL). Calls `onEvent` with each event's name
 * and parsed data; resolves when the stream ends or `signal` aborts.
 */
export async function followEvents<E extends { event: string; data: unknown }>(
  path: string,
  onEvent: (event: E) => void,
  signal: AbortSignal,
): Promise<void> {
  const token = savedToken();
  const response = await fetch(`/api/v1/${path}`, {
    headers: { Accept: 'text/event-stream', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    signal,
  });
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => null)) as Partial<ApiErrorView> | null;
    throw new ApiError(response.status, body?.code ?? String(response.status), body?.message ?? response.statusText);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += value;
    // An event ends at a blank line; a line starting with ':' is a keep-alive comment.
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) onEvent({ event, data: JSON.parse(data.join('\n')) as unknown } as E);
    }
  }
}
