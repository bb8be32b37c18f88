/**
 * Data access lives in the store layer (docs/architecture.md, Folders): every call that reaches the
 * database — a statement, a TypeORM repository, manager, data source, query runner or query builder call,
 * a pg or PGlite client call — is made by a store module (`*.store.ts`) or by the database layer itself
 * (src/db/: the connection, migrations, prepared statements). Services hold rules and call stores; a
 * feature's operations (feature.ts, *.ops.ts) never hold the database at all. The calls are found with the
 * program's type checker (test/support/store-layer.ts), so no name can hide one and no Map or array
 * method is taken for one; there is no list of exempt files.
 *
 * `STORE_LAYER_REPORT=1` prints every call outside the store layer with its count; `STORE_LAYER_ROOT=<checkout>`
 * measures another checkout (with its node_modules) the same way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataAccess, isStoreLayer, type DataAccess } from './support/store-layer';

const ROOT = path.resolve(process.env.STORE_LAYER_ROOT ?? path.join(__dirname, '..'));

const DATABASE_IN_HANDLERS = /\bds\b|getRepository|createQueryBuilder|\.query(<[^>]*>)?\(|preparedQuery/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(rel);
  }
  return out;
}

const code = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
const shown = (a: DataAccess) => `${a.file}:${a.line} ${a.call}`;

describe('the store layer', () => {
  let all: DataAccess[] = [];
  beforeAll(() => {
    all = dataAccess(ROOT);
    if (process.env.STORE_LAYER_REPORT) {
      const outside = all.filter((a) => !isStoreLayer(a.file));
      const byFolder = new Map<string, number>();
      for (const a of outside) {
        const folder = a.file.split('/').slice(0, a.file.startsWith('src/') ? 2 : 1).join('/');
        byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
      }
      console.log([
        `data access outside the store layer: ${outside.length} (inside: ${all.length - outside.length})`,
        ...[...byFolder].sort(([a], [b]) => a.localeCompare(b)).map(([folder, n]) => `  ${folder}: ${n}`),
        ...outside.map(shown),
      ].join('\n'));
    }
  }, 180_000);

  it('reaches the database only from the stores and src/db', () => {
    expect(all.filter((a) => !isStoreLayer(a.file)).map(shown)).toEqual([]);
  });

  it('sees the stores\' own data access (the scan finds what it looks for)', () => {
    const inStores = all.filter((a) => isStoreLayer(a.file));
    expect(inStores.length).toBeGreaterThan(50);
    expect(inStores.some((a) => a.file === 'src/db/prepared.ts')).toBe(true);
  });

  it('keeps the database out of every operation handler', () => {
    const files = [...sourceFiles('src'), ...sourceFiles('jobs')].filter((f) => !f.startsWith('src/simulators/'));
    const handlers = files.filter((f) => /\/feature\.ts$|\.ops\.ts$/.test(f));
    expect(handlers.length).toBeGreaterThan(10);
    expect(handlers.filter((f) => DATABASE_IN_HANDLERS.test(code(f)))).toEqual([]);
  });
});
