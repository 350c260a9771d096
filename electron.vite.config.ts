import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import { rendererConfig } from './scripts/renderer-config';

const root = import.meta.dirname;

/** `npm run build`: the main process (src/main/electron.ts), the preload and the console renderer into out/. */
export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      rollupOptions: { input: { electron: resolve(root, 'src/main/electron.ts') } },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      // sandboxed preloads must be CommonJS
      rollupOptions: { input: { index: resolve(root, 'src/preload/index.ts') }, output: { format: 'cjs', entryFileNames: '[name].cjs' } },
    },
  },
  renderer: rendererConfig(root),
});
