// Writes the environment variables' reference into docs/configuration.md,
// between <!-- config-table:start --> and <!-- config-table:end -->, from the
// table in libs/config/src/settings.ts; the prose around the markers is kept.
// Run by `npm run config:generate`; `npm run config:check` fails when the
// committed page is not current. It needs no build: the few TypeScript files
// involved are transpiled in memory (typescript's transpileModule, no type
// check), so only relative and node: imports are followed.
const { readFileSync, writeFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const ts = require('typescript');

const root = join(__dirname, '..');
const page = join(root, 'docs/configuration.md');

/** A TypeScript module of the repository, with the relative imports it makes. */
function loadTypeScript(file, loaded = new Map()) {
  const known = loaded.get(file);
  if (known) return known.exports;
  const module = { exports: {} };
  loaded.set(file, module);
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  const requireFrom = (specifier) => {
    if (specifier.startsWith('node:')) return require(specifier);
    if (specifier.startsWith('./') || specifier.startsWith('../')) return loadTypeScript(`${resolve(dirname(file), specifier)}.ts`, loaded);
    throw new Error(`${relative(root, file)} imports ${specifier}: the docs generator follows relative and node: imports only`);
  };
  new Function('exports', 'require', 'module', '__filename', '__dirname', outputText)(
    module.exports,
    requireFrom,
    module,
    file,
    dirname(file),
  );
  return module.exports;
}

const { renderConfigTable, spliceConfigTable } = loadTypeScript(join(root, 'libs/config/src/config-docs.ts'));
const before = readFileSync(page, 'utf8');
const after = spliceConfigTable(before, renderConfigTable());
if (after !== before) writeFileSync(page, after);
console.log(`${relative(root, page)}: ${after === before ? 'up to date' : 'written'}`);
