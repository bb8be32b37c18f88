/**
 * As an operator runs it: `node dist/src/main.js` on the embedded default with its own
 * DATA_DIR. The start prints no configured secret (SANDBOX_API_KEY masked, a given ADMIN_TOKEN not at all),
 * keeps the generated encryption key outside DATA_DIR (a legacy DATA_DIR/encryption.key is moved out once,
 * and the move is logged), and a restart reads its stored credentials again (the sandbox syncs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encryptionKeyPath } from '../src/config/key-store';
import { buildChildService, childServiceMain } from './support/child-service';

const root = path.join(__dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'start-banner-'));
const dataDir = path.join(work, 'data');
const configHome = path.join(work, 'config');
const sandboxKey = `sk_sandbox_${randomBytes(16).toString('hex')}`;
const adminToken = `adm_${randomBytes(16).toString('hex')}`;
const legacyKey = randomBytes(32);

let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

/** Starts the service; resolves with everything it wrote until its banner, and its URL. */
function startService(): Promise<{ out: string; url: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env, PORT: '0', DATA_DIR: dataDir, XDG_CONFIG_HOME: configHome, SANDBOX_API_KEY: sandboxKey, ADMIN_TOKEN: adminToken,
    SYNC_INTERVAL_SECONDS: '0', LOG_LEVEL: 'info',
  };
  // The embedded default: no database or Redis, whatever runtime the suite runs on.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'ENCRYPTION_KEY', 'SERVICE_ROLE', 'DATABASE_SCHEMA']) delete env[name];
  const proc = spawn(process.execPath, [childServiceMain()], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`did not start: ${out}`)), 120_000);
    const seen = (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/\S+)[\s\S]*try: curl[^\n]*\n/.exec(out);
      if (m) { clearTimeout(timer); resolve({ out, url: m[1] }); }
    };
    proc.stdout!.on('data', seen);
    proc.stderr!.on('data', seen);
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${out}`)); });
  });
}

async function stop(): Promise<void> {
  const proc = child!;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

beforeAll(() => {
  buildChildService();
  // What an earlier version left: the key beside the database.
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dataDir, 'encryption.key'), legacyKey.toString('base64'), { mode: 0o600 });
}, 120_000);

it('prints no configured secret, moves the key out of DATA_DIR once, and restarts on its stored credentials', async () => {
  const first = await startService();
  expect(first.out).not.toContain(sandboxKey);
  expect(first.out).not.toContain(adminToken);
  expect(first.out).toContain(`sandbox API key: ${sandboxKey.slice(0, 4)}…${sandboxKey.slice(-4)}`);
  expect(first.out).toMatch(/moved the encryption key out of DATA_DIR/);
  // A quiet first start: no error line, and no "sync failed" (the sandbox's rehearsed failure is recorded, not logged).
  const logLines = first.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string });
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
  expect(first.out).not.toMatch(/sync failed/);
  const keyFile = encryptionKeyPath(dataDir, { XDG_CONFIG_HOME: configHome });
  expect(fs.existsSync(path.join(dataDir, 'encryption.key'))).toBe(false);
  expect(Buffer.from(fs.readFileSync(keyFile, 'utf8'), 'base64').equals(legacyKey)).toBe(true);
  expect(fs.statSync(path.dirname(keyFile)).mode & 0o777).toBe(0o700);
  await stop();

  const second = await startService();
  expect(second.out).not.toContain(sandboxKey);
  expect(second.out).not.toContain(adminToken);
  expect(second.out).not.toMatch(/moved the encryption key/);
  expect(fs.readdirSync(dataDir)).not.toContain('encryption.key');
  // The graceful stop kept the sandbox (no reset at this start): a sync reads the credentials it sealed under the moved key.
  expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
  const tenants = await (await fetch(`${second.url}/tenants`, { headers: { 'x-api-key': sandboxKey } })).json() as any;
  const alpha = (tenants.tenants as any[]).find((t) => t.slug === 'sandbox-alpha');
  const synced = await fetch(`${second.url}/tenants/${alpha.id}/sync`, { method: 'POST', headers: { 'x-api-key': sandboxKey, 'content-type': 'application/json' }, body: '{}' });
  expect(((await synced.json()) as any).ok).toBe(true);
  const status = await (await fetch(`${second.url}/tenants/${alpha.id}/status`, { headers: { 'x-api-key': sandboxKey } })).json() as any;
  expect(status.healthy).toBe(true);
  await stop();
}, 300_000);
