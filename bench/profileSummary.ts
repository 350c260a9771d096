import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 CPU profile (node --cpu-prof): self time per function and per source file, the top entries.
 * Usage: node --import tsx bench/profileSummary.ts FILE.cpuprofile [top=30]
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
export function summarise(file: string, top = 30): string {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fnTime = new Map<string, number>();
  const fileTime = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const url = n.callFrame.url
      .replace(/^file:\/\//, '')
      .replace(/.*node_modules\//, 'nm:')
      .replace(/.*\/src\/main\//, 'src:');
    const fn = `${n.callFrame.functionName || '(anon)'} ${url}:${n.callFrame.lineNumber + 1}`;
    fnTime.set(fn, (fnTime.get(fn) ?? 0) + us);
    const f = url || n.callFrame.functionName;
    fileTime.set(f, (fileTime.get(f) ?? 0) + us);
  }
  const fmt = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  return `total ${(total / 1e6).toFixed(2)} s sampled\n-- self time by function\n${fmt(fnTime)}\n-- self time by file\n${fmt(fileTime)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(summarise(process.argv[2]!, Number(process.argv[3] ?? 30)));
