import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from './api';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError | Error } | { state: 'ready'; value: T };

/** Fetches a route of the API whenever its path or parameters change; a newer request cancels the older one. */
export function useApi<T>(path: string | null, params: Record<string, string | undefined> = {}): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const key = path === null ? null : `${path}?${JSON.stringify(params)}`;
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setLoaded({ state: 'loading' });
    getJson<T>(path, params, controller.signal).then(
      (value) => setLoaded({ state: 'ready', value }),
      (error: Error) => {
        if (!controller.signal.aborted) setLoaded({ state: 'error', error });
      },
    );
    return () => controller.abort();
  }, [key]); // `key` stands for path and params
  return loaded;
}
