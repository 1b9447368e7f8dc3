import { useEffect, useState } from 'preact/hooks';

/**
 * The console's places, kept in the URL's hash so a link to a conversation
 * or a search can be shared and reloaded; the service serves one page.
 */
export type Route =
  | { page: 'home' }
  | { page: 'conversation'; tenant: string; conversation: string; asOf?: string }
  | { page: 'search'; tenant: string; q?: string }
  | { page: 'usage'; tenant: string; bucket?: string; days?: string }
  | { page: 'dead-letters' };

export function parseRoute(hash: string): Route {
  const [path, search = ''] = hash.replace(/^#/, '').split('?');
  let parts: string[];
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    // A hand-edited link with a broken escape: start from home rather than a blank page.
    return { page: 'home' };
  }
  const params = new URLSearchParams(search);
  const param = (name: string) => params.get(name) ?? undefined;
  if (parts[0] === 'dead-letters') return { page: 'dead-letters' };
  if (parts[0] === 't' && parts[1]) {
    const tenant = parts[1];
    if (parts[2] === 'c' && parts[3]) return { page: 'conversation', tenant, conversation: parts[3], asOf: param('asOf') };
    if (parts[2] === 'usage') return { page: 'usage', tenant, bucket: param('bucket'), days: param('days') };
    return { page: 'search', tenant, q: param('q') };
  }
  return { page: 'home' };
}

export function hrefOf(route: Route): string {
  const q = (params: Record<string, string | undefined>) => {
    const s = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1]))).toString();
    return s ? `?${s}` : '';
  };
  const e = encodeURIComponent;
  switch (route.page) {
    case 'home':
      return '#/';
    case 'dead-letters':
      return '#/dead-letters';
    case 'conversation':
      return `#/t/${e(route.tenant)}/c/${e(route.conversation)}${q({ asOf: route.asOf })}`;
    case 'search':
      return `#/t/${e(route.tenant)}/search${q({ q: route.q })}`;
    case 'usage':
      return `#/t/${e(route.tenant)}/usage${q({ bucket: route.bucket, days: route.days })}`;
  }
}

export const navigate = (route: Route): void => {
  location.hash = hrefOf(route);
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
