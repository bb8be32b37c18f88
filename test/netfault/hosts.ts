/**
 * The processes of the network-fault harness, each on its own host (network.ts): a throwaway PostgreSQL
 * cluster (its own data directory, run as user postgres), a Redis without persistence, the service as
 * `SERVICE_ROLE=api` (the sandbox and its simulators on) and as `SERVICE_ROLE=worker`, reaching the
 * simulators through the api's address. Their output goes to files in the run's directory, shown when
 * something fails.
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NAMESPACE_PREFIX, type HostName, type NetfaultNetwork } from './network';
import { childServiceMain } from '../support/child-service';

const root = path.join(__dirname, '..', '..');
export const API_PORT = 3000;
const WORKER_PORT = 3001;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The newest PostgreSQL server installed (Debian's layout), or null. */
export function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base) ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest ? path.join(base, newest, 'bin') : null;
}

async function until(what: string, probe: () => boolean | Promise<boolean>, tries: number, log?: () => string): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await Promise.resolve(probe()).catch(() => false)) return;
    await sleep(500);
  }
  throw new Error(`gave up waiting for ${what}${log ? `\n${log()}` : ''}`);
}

export class NetfaultHosts {
  readonly dir: string;
  readonly apiUrl: string;
  private readonly children: ChildProcess[] = [];
  private readonly logs = new Map<string, string>();

  constructor(private readonly net: NetfaultNetwork) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `${NAMESPACE_PREFIX}${net.tag}-`));
    this.apiUrl = `http://${net.address('api')}:${API_PORT}`;
  }

  /** The tail of a process's output (for a failure message). */
  log(name: string): string {
    const file = this.logs.get(name);
    return file && fs.existsSync(file) ? fs.readFileSync(file, 'utf8').slice(-4000) : '';
  }

  private start(name: string, host: HostName, argv: string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): ChildProcess {
    const file = path.join(this.dir, `${name}.log`);
    this.logs.set(name, file);
    const out = fs.createWriteStream(file);
    const child = this.net.spawn(host, argv, env, root);
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    this.children.push(child);
    return child;
  }

  async startPostgres(): Promise<string> {
    const bin = postgresBin()!;
    const data = path.join(this.dir, 'pg');
    fs.mkdirSync(data, { mode: 0o700 });
    const [uid, gid] = ['-u', '-g'].map((f) => Number(execFileSync('id', [f, 'postgres'], { encoding: 'utf8' }).trim()));
    for (const d of [this.dir, data]) fs.chownSync(d, uid, gid);
    const asPostgres = ['setpriv', '--reuid=postgres', '--regid=postgres', '--clear-groups', '--'];
    execFileSync(asPostgres[0], [...asPostgres.slice(1), path.join(bin, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'],
      { stdio: 'pipe', cwd: this.dir, env: { PATH: process.env.PATH } });
    // Trust over the harness's links only; the cluster listens on its host's address and nowhere else.
    fs.appendFileSync(path.join(data, 'pg_hba.conf'), '\nhost all all 10.231.0.0/16 trust\n');
    const addr = this.net.address('postgres');
    this.start('postgres', 'postgres', [...asPostgres, path.join(bin, 'postgres'), '-D', data, '-c', `listen_addresses=${addr}`, '-c', 'port=5432',
      '-c', `unix_socket_directories=${data}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=500']);
    await until('PostgreSQL', () => spawnSync('pg_isready', ['-q', '-h', addr, '-p', '5432', '-U', 'postgres', '-d', 'postgres']).status === 0, 60, () => this.log('postgres'));
    return `postgres://postgres@${addr}:5432/postgres`;
  }

  async startRedis(): Promise<string> {
    const addr = this.net.address('redis');
    this.start('redis', 'redis', ['redis-server', '--bind', addr, '--port', '6379', '--save', '', '--appendonly', 'no', '--protected-mode', 'no']);
    await until('Redis', () => spawnSync('redis-cli', ['-h', addr, '-p', '6379', 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG', 60, () => this.log('redis'));
    return `redis://${addr}:6379`;
  }

  /**
   * The api, then the worker (the api has migrated by the time it listens), both with `env`; resolves once
   * the api is ready (the sandbox seeded and first synced, which only the worker can do).
   */
  async startService(env: Record<string, string>): Promise<void> {
    const node = [process.execPath, '--max-old-space-size=512', childServiceMain()];
    const shared = { PATH: process.env.PATH, HOME: this.dir, ...env };
    const api = this.start('api', 'api', node, { ...shared, SERVICE_ROLE: 'api', HOST: this.net.address('api'), PORT: String(API_PORT) });
    await until('the api to listen', async () => api.exitCode === null && (await fetch(`${this.apiUrl}/healthz`)).ok, 240, () => this.log('api'));
    this.start('worker', 'worker', node, { ...shared, SERVICE_ROLE: 'worker', HOST: this.net.address('worker'), PORT: String(WORKER_PORT) });
    await until('the api to be ready', async () => (await fetch(`${this.apiUrl}/readyz`)).status === 200, 360, () => `${this.log('api')}\n${this.log('worker')}`);
  }

  /**
   * Webhook receivers must be loopback under WEBHOOK_ALLOW_LOOPBACK (the SSRF guard refuses private
   * addresses): on the api's and the worker's hosts, 127.0.0.1:<port> is relayed to the client's receiver.
   */
  async relayLoopback(port: number, to: string): Promise<void> {
    const script = `const net = require('node:net');
net.createServer((s) => { const t = net.connect(${port}, ${JSON.stringify(to)}); s.pipe(t); t.pipe(s);
  s.on('error', () => t.destroy()); t.on('error', () => s.destroy()); s.on('close', () => t.destroy()); t.on('close', () => s.destroy()); })
  .listen(${port}, '127.0.0.1', () => console.log('relaying'));`;
    for (const host of ['api', 'worker'] as const) {
      const child = this.start(`relay-${host}`, host, [process.execPath, '-e', script]);
      await until(`the relay on ${host}`, () => this.log(`relay-${host}`).includes('relaying') && child.exitCode === null, 40, () => this.log(`relay-${host}`));
    }
  }

  /** Every process stopped (TERM, then KILL), their logs copied to `keepLogsIn`, the data directory removed. */
  async stop(keepLogsIn: string): Promise<void> {
    await Promise.all(this.children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise<void>((resolve) => {
      const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
      c.once('exit', () => { clearTimeout(kill); resolve(); });
      c.kill('SIGTERM');
    })));
    fs.mkdirSync(keepLogsIn, { recursive: true });
    for (const [name, file] of this.logs) if (fs.existsSync(file)) fs.copyFileSync(file, path.join(keepLogsIn, `${name}.log`));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Secrets of one run: generated, never printed. */
export function runSecrets(): { ENCRYPTION_KEY: string; ADMIN_TOKEN: string } {
  return { ENCRYPTION_KEY: randomBytes(32).toString('base64'), ADMIN_TOKEN: randomBytes(24).toString('hex') };
}
