import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transformSync } from '@swc/core';
import { openDatabase } from './database';

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms;) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('embedded database process', () => {
  const runIt = process.env.DATABASE_URL ? it.skip : it;

  runIt('runs apart from the service, keeps its data on disk across a restart, and is gone after close', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-cluster-'));
    try {
      const first = await openDatabase({ dataDir });
      expect(first.embeddedPid).toBeGreaterThan(0);
      expect(first.embeddedPid).not.toBe(process.pid);
      await first.dataSource.query('CREATE TABLE kept (v text)');
      await first.dataSource.query("INSERT INTO kept VALUES ('across a restart')");
      await first.close();
      expect(alive(first.embeddedPid!)).toBe(false);

      const second = await openDatabase({ dataDir });
      try {
        expect(await second.dataSource.query('SELECT v FROM kept')).toEqual([{ v: 'across a restart' }]);
      } finally {
        await second.close();
      }
      // Owner-only files, also those the database process wrote.
      const modes = fs.readdirSync(path.join(dataDir, 'pg'), { recursive: true })
        .map((f) => fs.statSync(path.join(dataDir, 'pg', String(f))))
        .filter((s) => s.isFile()).map((s) => s.mode & 0o077);
      expect(modes.filter((m) => m !== 0)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  runIt('a second database process on a data directory opens it only once the first has closed it, and sees what it committed', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-cluster-'));
    try {
      const first = await openDatabase({ dataDir });
      await first.dataSource.query('CREATE TABLE kept (v text)');
      await first.dataSource.query("INSERT INTO kept VALUES ('committed by the first')");
      // A restarted service while the first database process is still closing its files.
      let secondOpen = false;
      const opening = openDatabase({ dataDir }).then((db) => { secondOpen = true; return db; });
      expect(await until(() => secondOpen, 3_000)).toBe(false);
      await first.close();
      const second = await opening;
      try {
        expect(await second.dataSource.query('SELECT v FROM kept')).toEqual([{ v: 'committed by the first' }]);
      } finally {
        await second.close();
      }
      expect(fs.existsSync(path.join(dataDir, 'pg.lock'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  /** A plain Node parent running the compiled module (it has no imports of the project) and `script`. */
  function parentProcess(work: string, script: string, env: Record<string, string> = {}) {
    const compiled = transformSync(fs.readFileSync(path.join(__dirname, 'embedded-cluster.ts'), 'utf8'), {
      filename: 'embedded-cluster.ts', module: { type: 'commonjs' }, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    }).code;
    fs.writeFileSync(path.join(work, 'embedded-cluster.js'), compiled);
    // NODE_PATH: the compiled module finds PGlite in this project's node_modules.
    const parent = spawn(process.execPath, ['-e', `const { startEmbeddedCluster } = require('./embedded-cluster.js');\n${script}`], {
      cwd: work, env: { PATH: process.env.PATH ?? '', NODE_PATH: path.join(__dirname, '..', '..', 'node_modules'), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    parent.stdout!.on('data', (d) => { out += d; });
    parent.stderr!.on('data', (d) => { out += d; });
    return { parent, out: () => out };
  }

  runIt('exits when the service process is killed (no database left holding the data directory)', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-parent-'));
    const { parent, out } = parentProcess(work, `
      startEmbeddedCluster(undefined, require('path').join(${JSON.stringify(work)}, '.s.PGSQL.5432')).then((c) => console.log('db-pid ' + c.pid));
      setInterval(() => undefined, 1000);
    `);
    expect(await until(() => /db-pid \d+/.test(out()), 120_000)).toBe(true);
    const dbPid = Number(/db-pid (\d+)/.exec(out())![1]);
    expect(alive(dbPid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await until(() => !alive(dbPid), 15_000)).toBe(true);
    fs.rmSync(work, { recursive: true, force: true });
  }, 180_000);

  runIt('a shared template directory is used only when it is closed to everyone else, and outlives the process', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-parent-'));
    const run = async (shared: string) => {
      const { parent, out } = parentProcess(work, `
        startEmbeddedCluster(undefined, require('path').join(${JSON.stringify(work)}, '.s.PGSQL.5432'))
          .then(async (c) => { await c.stop(); console.log('closed'); });
      `, { EMBEDDED_TEMPLATE_DIR: shared });
      expect(await new Promise<number | null>((resolve) => parent.once('exit', resolve))).toBe(0);
      expect(out()).toMatch(/closed/);
    };
    try {
      // Open to others: somebody else could have planted a cluster there, so the process makes its own.
      const open = fs.mkdtempSync(path.join(work, 'open-'));
      fs.chmodSync(open, 0o755);
      await run(open);
      expect(fs.readdirSync(open)).toEqual([]);
      // Owner-only: the template is made there once, kept for the next process, and owner-only itself.
      const closed = fs.mkdtempSync(path.join(work, 'closed-'));
      fs.chmodSync(closed, 0o700);
      await run(closed);
      expect(fs.readdirSync(closed)).toEqual(['cluster.tar']);
      expect(fs.statSync(path.join(closed, 'cluster.tar')).mode & 0o077).toBe(0);
      const made = fs.statSync(path.join(closed, 'cluster.tar')).mtimeMs;
      await run(closed);
      expect(fs.statSync(path.join(closed, 'cluster.tar')).mtimeMs).toBe(made);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);

  runIt('a service with nothing else to do still waits for the database to close before it exits', async () => {
    // Nothing else keeps this parent alive: stop() itself must, until the database process has closed.
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-parent-'));
    const { parent, out } = parentProcess(work, `
      startEmbeddedCluster(undefined, require('path').join(${JSON.stringify(work)}, '.s.PGSQL.5432'))
        .then(async (c) => { await c.stop(); console.log('closed ' + c.pid); });
    `);
    const code = await new Promise<number | null>((resolve) => parent.once('exit', resolve));
    expect(out()).toMatch(/closed \d+/);
    expect(code).toBe(0);
    expect(alive(Number(/closed (\d+)/.exec(out())![1]))).toBe(false);
    fs.rmSync(work, { recursive: true, force: true });
  }, 180_000);
});
