// The core has no import cycle, type imports included (madge --circular over src/main/core): a cycle makes load
// order matter (a module loaded first from inside one can see another's exports still uninitialised) and ties
// modules together that should change apart. Services that hold their core are reached through accessors
// (`perCore` in core/core.ts), so the core imports none of them.
// And its imports go down the floors (src/main/core/floors.mjs, docs/architecture.md "Floors"): never a higher floor,
// across engines only through their facades; eslint.config.js refuses the same imports as they are written.
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';
import { floorOf, floorViolations, unitOf } from '../../src/main/core/floors.mjs';

const REPO = resolve(import.meta.dirname, '..', '..');
const CORE = join(REPO, 'src/main/core');

async function graph(dir: string) {
  return madge(dir, { fileExtensions: ['ts'], tsConfig: join(REPO, 'tsconfig.json') });
}

async function circular(dir: string): Promise<string[][]> {
  return (await graph(dir)).circular();
}

/** A scratch tree of modules (path -> source). */
function scratch(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-imports-'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

describe('src/main/core imports', () => {
  it('have no cycle, type imports included', async () => {
    const result = await graph(CORE);
    expect(Object.keys(result.obj()).length).toBeGreaterThan(100);
    expect(result.circular()).toEqual([]);
  });

  it('the check sees a cycle when there is one, also through type imports', async () => {
    const dir = scratch({
      'a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'b.ts': "import type { C } from './c';\nexport const b = (c?: C) => c;\n",
      'c.ts': "import { a } from './a';\nexport type C = ReturnType<typeof a>;\n",
    });
    expect(await circular(dir)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});

describe('src/main/core floors', () => {
  it('every folder and root module of the core is on a floor', () => {
    const units = readdirSync(CORE)
      .filter((name) => name.endsWith('.ts') || statSync(join(CORE, name)).isDirectory())
      .map((name) => unitOf(name));
    expect(units.length).toBeGreaterThan(20);
    expect(units.filter((unit) => floorOf(unit) < 0)).toEqual([]);
  });

  it('imports go down the floors, across engines through their facades, type imports included', async () => {
    expect(floorViolations((await graph(CORE)).obj())).toEqual([]);
  });

  it('the check sees an import of a higher floor (also a type import), one behind a facade, and a unit on no floor', async () => {
    const dir = scratch({
      'entities/a.ts': "import type { B } from '../policy/b';\nexport const a = (b?: B) => b;\n",
      'policy/b.ts': 'export type B = number;\n',
      'dataPlane/c.ts': "import { d } from '../auth/d';\nimport { e } from '../auth/index';\nexport const c = [d, e];\n",
      'auth/d.ts': 'export const d = 1;\n',
      'auth/index.ts': "export const e = 2;\nexport { d } from './d';\n",
      'elsewhere.ts': 'export const f = 3;\n',
    });
    expect(floorViolations((await graph(dir)).obj())).toEqual([
      'dataPlane/c.ts → auth/d.ts: core/auth is reached through its facade auth/index.ts',
      'elsewhere.ts: core/elsewhere is on no floor (add it to src/main/core/floors.mjs)',
      'entities/a.ts → policy/b.ts: floor entities imports floor policy, above it',
    ]);
  });
});
