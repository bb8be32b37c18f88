/**
 * The service's own import graph (src, entities, jobs), read with TypeScript's own `preProcessFile`:
 * every `import`, `import type`, `export ... from`, `import('...')` type and dynamic import, resolved
 * the way the compiler resolves them. test/import-cycles.test.ts finds its cycles, test/layers.test.ts
 * checks it against the declared layers.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const DIRS = ['src', 'entities', 'jobs'];

function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(root, rel));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/**
 * The relative imports of each file, resolved to files of the repository (packages are left out).
 * `root`: another checkout to read instead of this one (to count an older commit the same way).
 */
export function importGraph(root = ROOT): Map<string, string[]> {
  const files = DIRS.flatMap((d) => sourceFiles(root, d));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
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

