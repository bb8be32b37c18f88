/**
 * No import cycle among the service's own modules (src, entities, jobs), type-only imports included
 * (docs/architecture.md, Folders). A cycle of types alone still ties the modules together: a feature
 * that sees the whole service graph can reach, and change, everything in it. The imports are read
 * with TypeScript's own `preProcessFile` (test/support/import-graph.ts), and the strongly connected
 * components of that graph are the cycles.
 */
import { importCycles, importGraph } from './support/import-graph';

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
