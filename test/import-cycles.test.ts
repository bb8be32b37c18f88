/**
 * No import cycle among the service's own modules (src, entities, jobs), type-only imports included
 * (docs/architecture.md, Folders). A cycle of types alone still ties the modules together: a feature
 * that sees the whole service graph can reach, and change, everything in it. The imports are read with
 * TypeScript's own `preProcessFile` (every `import`, `import type`, `export ... from`, `import('...')`
 * type and dynamic import), resolved the way the compiler resolves them, and the strongly connected
 * components of that graph are the cycles.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const DIRS = ['src', 'entities', 'jobs'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The relative imports of each file, resolved to files of the repository (packages are left out). */
export function importGraph(): Map<string, string[]> {
  const files = DIRS.flatMap((d) => sourceFiles(d));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const targets = new Set<string>();
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName)).replace(/\.js$/, '');
      const target = [`${base}.ts`, `${base}/index.ts`].find((f) => known.has(f));
      if (target) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Strongly connected components of more than one file (or a file importing itself), Tarjan's algorithm. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); component.push(w); } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** One shortest cycle through `from` inside its component, to name in a failure. */
function shortestCycle(graph: Map<string, string[]>, component: string[]): string[] {
  const inside = new Set(component);
  const from = component[0];
  const prev = new Map<string, string>();
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    for (const w of graph.get(queue[i]) ?? []) {
      if (!inside.has(w)) continue;
      if (w === from) {
        const cycle = [from];
        for (let v = queue[i]; v !== from; v = prev.get(v)!) cycle.splice(1, 0, v);
        return [...cycle, from];
      }
      if (!prev.has(w)) { prev.set(w, queue[i]); queue.push(w); }
    }
  }
  return component;
}

describe('imports', () => {
  it('form no cycle among src, entities and jobs, type-only imports included', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    const described = importCycles(graph).map((c) => `${c.length} files, e.g. ${shortestCycle(graph, c).join(' -> ')}`);
    expect(described).toEqual([]);
  });
});
