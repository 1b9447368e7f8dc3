import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The service serves the build at /console (dist/console); everything is bundled, nothing comes from a CDN.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Inline nothing: the page's Content-Security-Policy admits scripts and styles from its own origin only.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
