// The core has no import cycle, type imports included (madge --circular over src/main/core): a cycle makes load
// order matter (a module loaded first from inside one can see another's exports still uninitialised) and ties
// modules together that should change apart. Services that hold their core are reached through accessors
// (`perCore` in core/core.ts), so the core imports none of them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '..', '..');

async function circular(dir: string): Promise<string[][]> {
  const result = await madge(dir, { fileExtensions: ['ts'], tsConfig: join(REPO, 'tsconfig.json') });
  return result.circular();
}

describe('src/main/core imports', () => {
  it('have no cycle, type imports included', async () => {
    const result = await madge(join(REPO, 'src/main/core'), { fileExtensions: ['ts'], tsConfig: join(REPO, 'tsconfig.json') });
    expect(Object.keys(result.obj()).length).toBeGreaterThan(100);
    expect(result.circular()).toEqual([]);
  });

  it('the check sees a cycle when there is one, also through type imports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-cycles-'));
    writeFileSync(join(dir, 'a.ts'), "import { b } from './b';\nexport const a = () => b;\n");
    writeFileSync(join(dir, 'b.ts'), "import type { C } from './c';\nexport const b = (c?: C) => c;\n");
    writeFileSync(join(dir, 'c.ts'), "import { a } from './a';\nexport type C = ReturnType<typeof a>;\n");
    expect(await circular(dir)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
