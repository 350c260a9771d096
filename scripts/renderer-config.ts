import { join } from 'node:path';
import react from '@vitejs/plugin-react';
import type { UserConfig } from 'vite';

/**
 * The renderer's Vite configuration: one source for `electron-vite build` (electron.vite.config.ts) and for the
 * quick renderer-only build that `npm start` / `npm test` run when out/renderer is missing or stale.
 */
export function rendererConfig(projectRoot: string, outDir = join(projectRoot, 'out', 'renderer')): UserConfig {
  return {
    root: join(projectRoot, 'src', 'renderer'),
    base: '/',
    plugins: [react()],
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      chunkSizeWarningLimit: 2000,
      rollupOptions: { input: join(projectRoot, 'src', 'renderer', 'index.html') },
    },
  };
}
