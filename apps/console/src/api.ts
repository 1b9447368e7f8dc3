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
