// The core has no import cycle: no module of src/main/core reaches itself through imports that exist at run time
// (`import type` and type-only specifiers are erased by TypeScript and do not count). A cycle makes load order
// matter: a module loaded first from inside one can see another's exports still uninitialised.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..', 'src', 'main', 'core');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The run-time imports (and re-exports) of a module that stay inside the core, as absolute file paths. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const st of source.statements) {
    let spec: string | undefined;
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause && !clause.name && named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      if (onlyTypes) continue;
      spec = (st.moduleSpecifier as ts.StringLiteral).text;
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) {
      spec = (st.moduleSpecifier as ts.StringLiteral).text;
    }
    if (!spec?.startsWith('.')) continue;
    const base = resolve(dirname(file), spec);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((p) => p.startsWith(ROOT) && safeIsFile(p));
    if (target) out.push(target);
  }
  return out;
}

const safeIsFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** Every cycle found by a depth-first walk, each as the list of modules it goes through. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') found.push([...stack.slice(stack.indexOf(g)), g]);
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('src/main/core imports', () => {
  it('have no cycle at run time', () => {
    const graph = new Map(files(ROOT).map((f) => [f, runtimeImports(f)]));
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' > '))).toEqual([]);
  });

  it('the check sees a cycle when there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });
});
