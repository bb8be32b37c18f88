/**
 * The folders layer (docs/architecture.md, Folders): every folder of src and jobs, `entities`, and each
 * file at the root of src sits in exactly one of the layers below, and imports only from its own layer
 * or lower ones. Inside a layer folders may import each other one way only: no two folders import each
 * other, and no folders form a loop. A new folder has no layer until it is given one here, and fails.
 *
 * Imports are read as test/import-cycles.test.ts reads them (test/support/import-graph.ts: type-only
 * imports included). Test files (`*.test.ts`) are left out: nothing imports them, and a test may set
 * up its module with whatever sits above it.
 *
 * To count the imports that run up the layers, the folder pairs importing each other and the loops of
 * folders, in this checkout or another one (an older commit, counted with this declaration):
 *   LAYERS_REPORT=1 [LAYERS_ROOT=<checkout>] npm test -- test/layers.test.ts
 */
import path from 'node:path';
import { importCycles, importGraph } from './support/import-graph';

/** Lowest first. A folder is `src/<name>`, `jobs/<name>`, `entities`, or one file at the root of src. */
const LAYERS: { name: string; folders: string[] }[] = [
  // No service logic: types, helpers, configuration, the schema and the database.
  { name: 'base', folders: ['entities', 'src/shared', 'src/config', 'src/errors', 'src/security', 'src/pages', 'src/db'] },
  // What every feature runs on: the job queue, vendor budgets, HTTP plumbing and metrics, tracing.
  { name: 'infrastructure', folders: ['jobs/queue', 'src/budget', 'src/http', 'src/telemetry'] },
  // Vendors, real and simulated.
  { name: 'vendors', folders: ['src/connectors', 'src/simulators'] },
  // Who the caller is and what it may see.
  { name: 'access', folders: ['src/access'] },
  // What an operation is and the one runner that enforces it; every feature declares its operations with it.
  { name: 'operations', folders: ['src/operations'] },
  // The records' life: the audit log, vendor writes, sync, the stored records.
  { name: 'records', folders: ['src/audit', 'src/writes', 'src/sync', 'src/records'] },
  // What changed and who hears of it: events, webhooks, and the tenants and connections they are about.
  { name: 'events', folders: ['src/events', 'src/webhooks', 'src/tenants'] },
  // The domain features.
  {
    name: 'features',
    folders: [
      'src/identity', 'src/tickets', 'src/devices', 'src/projects', 'src/agreements', 'src/billing', 'src/sandbox',
      'src/companies', 'src/requests', 'src/ask', 'src/people',
    ],
  },
  // How callers reach the operations: REST, GraphQL, MCP, the pages.
  { name: 'surfaces', folders: ['src/rest', 'src/graphql', 'src/mcp', 'src/console', 'src/connect', 'src/isv-console'] },
  // Where everything meets: the service graph, the feature list, the app, the process, the job processors, the tools.
  {
    name: 'composition root',
    folders: ['src/services.ts', 'src/features.ts', 'src/app.ts', 'src/server.ts', 'src/main.ts', 'jobs/processors', 'src/tools'],
  },
];

/** The folder a file belongs to. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'entities') return 'entities';
  return parts.length === 2 ? file : `${parts[0]}/${parts[1]}`;
}

const layerOf = new Map(LAYERS.flatMap((layer, rank) => layer.folders.map((folder) => [folder, rank] as const)));

interface LayerReading {
  folders: string[];
  /** Each file-level import between two folders, `importer -> imported`. */
  crossings: { from: string; to: string }[];
  /** Folder-level edges. */
  folderGraph: Map<string, string[]>;
}

function read(root?: string): LayerReading {
  const graph = importGraph(root);
  const crossings: { from: string; to: string }[] = [];
  const folderEdges = new Map<string, Set<string>>();
  const folders = new Set<string>();
  for (const [from, targets] of graph) {
    folders.add(folderOf(from));
    if (from.endsWith('.test.ts')) continue;
    for (const to of targets) {
      if (folderOf(from) === folderOf(to)) continue;
      crossings.push({ from, to });
      const edges = folderEdges.get(folderOf(from)) ?? new Set<string>();
      folderEdges.set(folderOf(from), edges.add(folderOf(to)));
    }
  }
  const folderGraph = new Map([...folderEdges].map(([folder, edges]) => [folder, [...edges].sort()]));
  return { folders: [...folders].sort(), crossings, folderGraph };
}

/** Imports whose importer's layer is below the imported file's (a folder without a layer is not counted). */
function upward(reading: LayerReading): string[] {
  return reading.crossings
    .filter(({ from, to }) => (layerOf.get(folderOf(from)) ?? Infinity) < (layerOf.get(folderOf(to)) ?? -Infinity))
    .map(({ from, to }) => `${from} -> ${to}`)
    .sort();
}

/** Folder pairs importing each other, `a <-> b`, each named once. */
function mutualPairs(reading: LayerReading): string[] {
  const pairs: string[] = [];
  for (const [a, edges] of reading.folderGraph) {
    for (const b of edges) if (a < b && reading.folderGraph.get(b)?.includes(a)) pairs.push(`${a} <-> ${b}`);
  }
  return pairs.sort();
}

/** The file-level imports from `a` to `b`, to name in a failure. */
function importsBetween(reading: LayerReading, a: string, b: string): string[] {
  return reading.crossings.filter(({ from, to }) => folderOf(from) === a && folderOf(to) === b).map(({ from, to }) => `${from} -> ${to}`);
}

const reading = read(process.env.LAYERS_ROOT && path.resolve(process.env.LAYERS_ROOT));

describe('layers', () => {
  if (process.env.LAYERS_REPORT) {
    it('counts the imports that run up the layers and the folder pairs importing each other', () => {
      const up = upward(reading);
      const pairs = mutualPairs(reading);
      const unlayered = reading.folders.filter((f) => !layerOf.has(f));
      const loops = importCycles(reading.folderGraph).map((loop) => loop.join(', '));
      console.log([
        `upward imports: ${up.length}`, ...up.map((u) => `  ${u}`),
        `folder pairs importing each other: ${pairs.length}`, ...pairs.map((p) => `  ${p}`),
        `loops of folders: ${loops.length}`, ...loops.map((l) => `  ${l}`),
        `folders without a layer: ${unlayered.length}`, ...unlayered.map((f) => `  ${f}`),
      ].join('\n'));
    });
  }

  it('give every folder exactly one layer', () => {
    const declared = LAYERS.flatMap((l) => l.folders);
    expect(declared.filter((f, i) => declared.indexOf(f) !== i)).toEqual([]);
    expect(reading.folders.filter((f) => !layerOf.has(f))).toEqual([]);
    expect(declared.filter((f) => !reading.folders.includes(f))).toEqual([]);
  });

  it('import only from their own layer or lower ones', () => {
    expect(upward(reading)).toEqual([]);
  });

  it('have no two folders importing each other, nor a loop of folders inside a layer', () => {
    const pairs = mutualPairs(reading).map((pair) => {
      const [a, b] = pair.split(' <-> ');
      return { pair, imports: [...importsBetween(reading, a, b), ...importsBetween(reading, b, a)] };
    });
    expect(pairs).toEqual([]);
    const loops = importCycles(reading.folderGraph);
    expect(loops).toEqual([]);
  });
});
