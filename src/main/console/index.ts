import { fileURLToPath } from 'node:url';

export { startConsoleServer, DEFAULT_CONSOLE_ADDRESS, type ConsoleServer, type ConsoleServerOptions } from './server';

/** Where `vite build` puts the renderer, seen from this source file (headless runs under tsx from src/). */
export function defaultRendererDir(): string {
  return fileURLToPath(new URL('../../../out/renderer', import.meta.url));
}
