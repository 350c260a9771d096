// Runs before npm start and npm test: puts back Node's native builds if a packaging run left Electron's in
// node_modules, and builds the console renderer when it is missing or older than its sources (quick otherwise).
import { createRequire } from 'node:module';
import { buildRenderer, isRendererStale } from './build-renderer';

const require = createRequire(import.meta.url);
const { restoreNodeBuilds } = require('./native-backup.cjs') as { restoreNodeBuilds(): boolean };

try {
  if (restoreNodeBuilds()) process.stderr.write("weft: restored Node's native module builds after an interrupted packaging run\n");
  if (isRendererStale()) await buildRenderer();
} catch (e) {
  process.stderr.write(`weft: preparing failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
}
