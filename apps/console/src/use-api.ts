import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getJson } from './api';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; error: ApiError | Error } | { state: 'ready'; value: T };

/**
 * Fetches a route of the API whenever its path or parameters change; a
 * newer request cancels the older one. A new `revision` fetches again
 * while the page keeps showing what it has (a live page refreshing).
 */
export function useApi<T>(path: string | null, params: Record<string, string | undefined> = {}, revision = 0): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const key = path === null ? null : `${path}?${JSON.stringify(params)}`;
  const shownKey = useRef<string | null>(null);
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    if (shownKey.current !== key) setLoaded({ state: 'loading' });
    getJson<T>(path, params, controller.signal).then(
      (value) => {
        shownKey.current = key;
        setLoaded({ state: 'ready', value });
      },
      (error: Error) => {
        if (!controller.signal.aborted) setLoaded({ state: 'error', error });
      },
    );
    return () => controller.abort();
  }, [key, revision]); // `key` stands for path and params
  return loaded;
}
