/**
 * The embedded store is reachable by this service only: no TCP listener, its Unix socket in a 0700
 * directory, owner-only modes on every file under DATA_DIR, and the session's search_path fixed by
 * the service at connect.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from './database';

/** Inodes of the TCP sockets this process has in LISTEN state (from /proc). */
function listeningTcpInodes(): Set<string> {
  const listening = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A') listening.add(cols[9]);
    }
  }
  const mine = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link = '';
    try { link = fs.readlinkSync(`/proc/self/fd/${fd}`); } catch { continue; }
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m && listening.has(m[1])) mine.add(m[1]);
  }
  return mine;
}

function modes(dir: string): { path: string; mode: number }[] {
  const out: { path: string; mode: number }[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push({ path: path.relative(dir, p), mode: fs.statSync(p).mode & 0o777 });
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

describe('embedded database access', () => {
  it('opens no TCP listener; its Unix socket sits in a 0700 directory', async () => {
    const before = listeningTcpInodes();
    const db = await openDatabase({});
    try {
      const opened = [...listeningTcpInodes()].filter((i) => !before.has(i));
      expect(opened).toEqual([]);
      expect(db.url).not.toMatch(/127\.0\.0\.1|localhost/);
      expect(db.socketDir).toBeDefined();
      expect(fs.statSync(db.socketDir!).mode & 0o777).toBe(0o700);
      expect(await db.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    // The socket directory goes with the database.
    expect(fs.existsSync(db.socketDir!)).toBe(false);
  });

  it('the service names its search_path at connect, whatever the shared session was left with', async () => {
    const db = await openDatabase({});
    try {
      // PGlite is one session for every connection: a search_path emptied on one connection used
      // to stay for the next, and every unqualified table name failed.
      await db.dataSource.query(`SELECT set_config('search_path', '', false)`);
      await db.dataSource.destroy();
      // The socket server frees its one connection slot on the next tick after the close.
      await new Promise((r) => setTimeout(r, 300));
      await db.dataSource.initialize();
      const [row] = await db.dataSource.query('SHOW search_path');
      expect(row.search_path).toBe('public');
      expect(await db.dataSource.query('SELECT count(*)::int AS n FROM tenants')).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });

  it('keeps nothing under DATA_DIR open to group or others', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-data-'));
    fs.chmodSync(dataDir, 0o755);
    try {
      const db = await openDatabase({ dataDir });
      try {
        expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
        expect(fs.statSync(path.join(dataDir, 'pg')).mode & 0o777).toBe(0o700);
        await db.dataSource.query('CREATE TABLE mode_probe (x int)');
        await db.dataSource.query('INSERT INTO mode_probe VALUES (1)');
      } finally {
        await db.close();
      }
      const all = modes(dataDir);
      expect(all.length).toBeGreaterThan(100);
      expect(all.filter((f) => (f.mode & 0o077) !== 0)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
