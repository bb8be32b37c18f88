/**
 * SQL lives in the store layer of each feature (docs/architecture.md, Folders): a statement is run only
 * by a feature's store module (`*.store.ts`) or by a module that is itself the store of its concern,
 * and a feature's operations (feature.ts, *.ops.ts) never hold the database at all: they call their
 * feature's services and stores.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Modules that are the store of their concern (their own SQL is the point of them). */
const STORES_OF_THEIR_CONCERN = new Set([
  'src/db/database.ts', 'src/db/prepared.ts', // the store itself: migrations, prepared statements
  'src/writes/write-fence.ts', 'src/writes/idempotency.service.ts', // exactly once across processes; idempotency records
  'src/billing/cost-resolution.ts', // where a cost row lands: a rule written as SQL
  'src/billing/sandbox-billing.ts', // the sandbox's billing rows
  'src/audit/audit.service.ts', // the audit log
  'src/access/access.service.ts', // grants and keys: the one module that reads them
  'src/console/console-auth.ts', // console sign-in links and sessions
  'src/tickets/references.ts', // boards, statuses, priorities and members a write names
  'src/http/metrics.ts', 'src/rest/example-ids.ts', 'src/app.ts', // /metrics gauges, /docs examples, /readyz
]);


const STATEMENT = /\.query(<[^>]*>)?\(|preparedQuery(<[^>]*>)?\(/;
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

// The vendor simulators keep their own in-memory stores; migrations are the schema.
const files = [...sourceFiles('src'), ...sourceFiles('jobs')].filter((f) => !f.startsWith('src/simulators/'));
const code = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');

describe('the store layer', () => {
  it('runs every statement: stores and the modules that are the store of their concern', () => {
    const outside = files.filter((f) => STATEMENT.test(code(f)))
      .filter((f) => !f.endsWith('.store.ts') && !STORES_OF_THEIR_CONCERN.has(f));
    expect(outside).toEqual([]);
  });

  it('keeps the database out of every operation handler', () => {
    const handlers = files.filter((f) => /\/feature\.ts$|\.ops\.ts$/.test(f));
    expect(handlers.length).toBeGreaterThan(10);
    expect(handlers.filter((f) => DATABASE_IN_HANDLERS.test(code(f)))).toEqual([]);
  });

  it('lists only modules that exist and still run statements', () => {
    for (const f of STORES_OF_THEIR_CONCERN) expect([f, fs.existsSync(path.join(ROOT, f)) && STATEMENT.test(code(f))]).toEqual([f, true]);
  });
});
