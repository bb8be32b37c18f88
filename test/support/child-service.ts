/**
 * The service in a child process on the PostgreSQL + Redis runtime (a worker, or an api without the
 * sandbox), sharing the test's schema, queue and encryption key: what the crash and scale-out tests
 * kill and start. Built once per test run with swc (buildChildService).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runtime } from './runtime';

const root = path.join(__dirname, '..', '..');

/**
 * This test run's build: a directory of its own beside the sources (so `__dirname`-relative paths hold),
 * named in global-setup.ts and removed by global-teardown.ts. Runs side by side (CI's passes) never write
 * into the files another run's child is loading.
 */
function buildDir(): string {
  return process.env.CHILD_BUILD_DIR ?? 'dist-test';
}

/** The built service's entry point. */
export function childServiceMain(): string {
  return path.join(root, buildDir(), 'src/main.js');
}

/** Builds the service once per test run (later files of the run find it built). */
export function buildChildService(): void {
  const marker = path.join(root, buildDir(), '.built');
  if (process.env.CHILD_BUILD_DIR && fs.existsSync(marker)) return;
  execFileSync(process.execPath, [path.join(root, 'node_modules/@swc/cli/bin/swc.js'), 'src', 'entities', 'jobs', '-d', buildDir(), '-q'], { cwd: root });
  fs.writeFileSync(marker, '');
}

export interface ChildServiceOptions {
  role: 'worker' | 'api';
  schema: string;
  queuePrefix: string;
  encryptionKey: string;
  env?: Record<string, string>;
}

/** Starts one; resolves with the process and its URL once it says it is up. */
export function startChildService(o: ChildServiceOptions): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [childServiceMain()], {
    cwd: root,
    env: {
      ...process.env, SERVICE_ROLE: o.role, PORT: '0', DATABASE_URL: runtime.databaseUrl!, REDIS_URL: runtime.redisUrl!,
      DATABASE_SCHEMA: o.schema, QUEUE_PREFIX: o.queuePrefix, ENCRYPTION_KEY: o.encryptionKey, QUEUE_LOCK_MS: '2000', QUEUE_STALLED_MS: '1000',
      SYNC_INTERVAL_SECONDS: '0', LOG_LEVEL: 'warn', ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${o.role} did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /(?:worker|listening) on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.stderr!.on('data', (d) => { out += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!/ on http/.test(out)) reject(new Error(`${o.role} exited ${code}: ${out}`)); });
  });
}

/**
 * Starts the built service (childServiceMain) with exactly this environment over the test's own, on
 * either runtime: `env` names the database (DATA_DIR for the embedded default, or DATABASE_URL and
 * DATABASE_SCHEMA) itself. Resolves once it says it is up.
 */
export function startServiceProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'DATABASE_SCHEMA', 'DATA_DIR']) delete base[k];
  const child = spawn(process.execPath, [childServiceMain()], {
    cwd: root,
    env: { ...base, PORT: '0', SYNC_INTERVAL_SECONDS: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the service did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /(?:worker|listening) on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.stderr!.on('data', (d) => { out += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!/ on http/.test(out)) reject(new Error(`the service exited ${code}: ${out}`)); });
  });
}
