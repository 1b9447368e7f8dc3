import { defineConfig } from 'tsup';

// CommonJS and ES modules with their declarations. The contract's schema and
// plain type files are bundled in; the package's dependencies and the
// frameworks (peer dependencies) are not.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'ai-sdk/index': 'src/ai-sdk/index.ts',
    'langchain/index': 'src/langchain/index.ts',
    'openai/index': 'src/openai/index.ts',
    'openai-agents/index': 'src/openai-agents/index.ts',
  },
  format: ['cjs', 'esm'],
  dts: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  splitting: true,
  tsconfig: 'tsconfig.build.json',
});
