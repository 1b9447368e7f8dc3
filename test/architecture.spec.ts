import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { AUTHENTICATED_HTTP_ROUTES, HTTP_ROUTE_SCOPES, OPEN_HTTP_ROUTES, RPC_SCOPES } from '../libs/domain/src';

const ROOT = join(__dirname, '..');
const ENTRY_POINTS = new Set([
  'apps/toolhistory/src/main.ts',
  'apps/toolhistory/src/migrate.ts',
  'apps/toolhistory/src/rebuild.ts',
  'apps/toolhistory/src/cli.ts',
  'apps/local-stack/src/main.ts',
]);
const TEST_FILE = /\.(spec|int-spec|e2e-spec|fixture)\.ts$/;
/** Routes the HTTP edge answers itself, with no use case behind them. */
const EDGE_ONLY_CONTROLLERS = new Set([
  'apps/toolhistory/src/console/console-assets.http-controller.ts', // the console's static files
  'apps/toolhistory/src/console/who-am-i.http-controller.ts', // the caller's own identity, as the guard verified it
  'apps/toolhistory/src/observability/metrics.http-controller.ts', // Prometheus's scrape
  'apps/toolhistory/src/observability/probes.http-controller.ts', // liveness and readiness
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    // Build output (a library's dist/, such as the packed client's) is not source.
    if (entry.isDirectory()) return entry.name === 'dist' || entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !TEST_FILE.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

describe('architecture', () => {
  const files = [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))];

  it('finds the production sources', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it('reads the environment only at the entry points; everything else gets the typed config', () => {
    const offenders = files.filter((f) => !ENTRY_POINTS.has(f) && /process\.env\b/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('names files in kebab-case', () => {
    const offenders = files.filter((f) => !/^[a-z0-9.-]+\.ts$/.test(f.split('/').pop()!));
    expect(offenders).toEqual([]);
  });

  it('gives every RPC of the proto an access rule, and no rule to an RPC the proto lacks', () => {
    const proto = readFileSync(join(ROOT, 'proto/toolhistory/v1/toolhistory.proto'), 'utf8');
    const service = /service ToolHistory \{([\s\S]*?)\n\}/.exec(proto)?.[1] ?? '';
    const rpcs = [...service.matchAll(/^\s*rpc (\w+)\(/gm)].map((m) => m[1]);
    expect(rpcs.length).toBeGreaterThan(5);
    expect(Object.keys(RPC_SCOPES).sort()).toEqual(rpcs.sort());
  });

  it('gives every HTTP route an access rule or names it open, and no rule to a route that does not exist', () => {
    const routes = files.flatMap((f) => {
      const source = readFileSync(join(ROOT, f), 'utf8');
      const controller = /@Controller\((?:'([^']*)')?\)/.exec(source);
      if (!controller) return [];
      // The route as Express names it: the controller's prefix joined to the handler's path.
      return [...source.matchAll(/@(Get|Post|Put|Patch|Delete)\((?:'([^']*)')?\)/g)].map(
        (m) => `${m[1].toUpperCase()} /${[controller[1], m[2]].filter(Boolean).join('/')}`,
      );
    });
    expect(routes.length).toBeGreaterThan(2);
    const ruled = [...Object.keys(HTTP_ROUTE_SCOPES), ...OPEN_HTTP_ROUTES, ...AUTHENTICATED_HTTP_ROUTES].sort();
    expect(routes.sort()).toEqual(ruled);
  });

  it('answers each RPC and route from one use case, whose folder holds its controllers', () => {
    // A use case: an exported class with an execute method, in the app.
    const useCases = new Map<string, string>();
    for (const f of files.filter((f) => f.startsWith('apps/toolhistory/'))) {
      const source = readFileSync(join(ROOT, f), 'utf8');
      for (const m of source.matchAll(/^export class (\w+)[^{]*\{([\s\S]*?)^\}/gm)) {
        if (/^ {2}(async )?execute\(/m.test(m[2])) useCases.set(m[1], f);
      }
    }
    const controllers = files.filter((f) =>
      /@GrpcMethod\('ToolHistory'|@(Get|Post|Put|Patch|Delete)\(/.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(controllers.length).toBeGreaterThan(10);
    const misplaced = controllers
      .filter((f) => !EDGE_ONLY_CONTROLLERS.has(f))
      .flatMap((f) => {
        const injected = [...readFileSync(join(ROOT, f), 'utf8').matchAll(/@Inject\(\w+\) private readonly \w+: (\w+)/g)]
          .map((m) => m[1])
          .filter((type) => useCases.has(type));
        if (injected.length !== 1) return [`${f}: ${injected.length} use cases (${injected.join(', ')})`];
        const home = dirname(useCases.get(injected[0])!);
        return home === dirname(f) ? [] : [`${f}: its use case ${injected[0]} is in ${home}`];
      });
    expect(misplaced).toEqual([]);
    // Each use case answers at least one RPC or route, or runs from the CLI or the recorder.
    expect(useCases.size).toBeGreaterThan(8);
  });

  it('puts every ToolHistory handler behind the caller guard (registered globally, never bypassed)', () => {
    const handlers = files.filter((f) => /@GrpcMethod\('ToolHistory'/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(handlers.length).toBe(Object.keys(RPC_SCOPES).length);
    const module = readFileSync(join(ROOT, 'apps/toolhistory/src/app.module.ts'), 'utf8');
    expect(module).toMatch(/provide: APP_GUARD, useClass: CallerGuard/);
    const offenders = files.filter((f) => /@Public\(|SetMetadata\(|UseGuards\(/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
