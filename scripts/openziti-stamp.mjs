// The OpenZiti tools' cache folder, and the fingerprint of their sources (pins and the test client): the tools cache is
// rebuilt when it changes, and the interop tests refuse a stale cache. Shared with test/interop/tools.ts.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where scripts/openziti-tools.sh builds the tools (the same rule as the script's). */
export function openzitiDir() {
  return process.env.WEFT_OPENZITI_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'weft', 'openziti');
}

export function openzitiStamp(root = join(dirname(fileURLToPath(import.meta.url)), '..')) {
  const mod = join(root, 'test', 'interop');
  const files = [
    'go.mod',
    'go.sum',
    ...readdirSync(join(mod, 'sdkclient'))
      .sort()
      .map((f) => join('sdkclient', f)),
  ];
  const h = createHash('sha256');
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(mod, f)))
      .update('\0');
  return h.digest('hex').slice(0, 16);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(openzitiStamp());
