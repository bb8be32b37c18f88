/**
 * The deployment: docker-compose.yml read as compose reads it (no container engine needed), and the same
 * topology run without containers: an api process and a worker process on PostgreSQL and Redis, the
 * sandbox on, reaching the simulators through the internal URL only (the public one does not resolve).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { parse } from 'yaml';
import { DEFAULT_SANDBOX_API_KEY, loadConfig } from '../src/config/config';
import { buildChildService, childServiceMain } from './support/child-service';
import { dropSchema } from '../src/db/database';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';

const root = path.join(__dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Compose's variable substitution: $$, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$';
    const v = env[name!];
    const unset = op?.startsWith(':') ? !v : v === undefined;
    if (op?.endsWith('?') && unset) throw new Error(`required variable ${name}: ${arg}`);
    if (op?.endsWith('-') && unset) return arg ?? '';
    return v ?? '';
  });
}

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  command?: string[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const secrets = { ENCRYPTION_KEY: randomBytes(32).toString('base64'), ADMIN_TOKEN: randomBytes(24).toString('hex'), POSTGRES_PASSWORD: 'pw0123456789' };

/** A service's environment as its container gets it, with `.env` holding `env`. */
function environmentOf(service: string, env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(compose.services[service].environment ?? {}).map(([k, v]) => [k, interpolate(String(v), env)]));
}

describe('docker-compose.yml', () => {
  const { api, worker, postgres, redis } = compose.services;

  it('runs PostgreSQL, Redis, one api and one worker, each with its role, on the same store and queue', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis', 'worker']);
    for (const [name, role] of [['api', 'api'], ['worker', 'worker']] as const) {
      const env = environmentOf(name, secrets);
      expect(env.SERVICE_ROLE).toBe(role);
      expect(new URL(env.DATABASE_URL).hostname).toBe('postgres');
      expect(new URL(env.DATABASE_URL).password).toBe(secrets.POSTGRES_PASSWORD);
      expect(new URL(env.REDIS_URL).hostname).toBe('redis');
      // What the service itself accepts (loadConfig stops a process on a bad value).
      const config = loadConfig({ ...env, NODE_ENV: 'production' });
      expect(config.role).toBe(role);
    }
    expect(environmentOf('postgres', secrets).POSTGRES_PASSWORD).toBe(secrets.POSTGRES_PASSWORD);
  });

  it('reaches the api (and the sandbox simulators on it) by service name from every process', () => {
    const apiPort = environmentOf('api', secrets).PORT;
    for (const name of ['api', 'worker']) {
      const config = loadConfig({ ...environmentOf(name, secrets), SANDBOX: 'true' });
      expect(config.sandboxVendorBaseUrl).toBe(`http://api:${apiPort}`);
    }
    // An origin only: the simulators' paths are the service's own.
    expect(() => loadConfig({ ...environmentOf('api', secrets), SANDBOX_VENDOR_BASE_URL: 'http://api:3000/sandbox-vendors' })).toThrow('SANDBOX_VENDOR_BASE_URL');
    expect(() => loadConfig({ ...environmentOf('api', secrets), SANDBOX_VENDOR_BASE_URL: 'ftp://api' })).toThrow('SANDBOX_VENDOR_BASE_URL');
    // The image listens on every interface, so `api:3000` reaches it from the worker's container.
    expect(read('Dockerfile')).toMatch(/^ENV .*\bHOST=0\.0\.0\.0\b/m);
    // The worker waits for the api to listen (its migrations are done by then), not for its readiness.
    expect(worker.depends_on?.api?.condition).toBe('service_started');
    const start = worker.command!.join(' ');
    expect(start).toContain(`http://api:${apiPort}/healthz`);
    expect(start).toMatch(/until .*healthz.*; do sleep \d+; done;\s*exec node .*dist\/src\/main\.js/s);
  });

  it('keeps the secrets in the env file: required, the same for both processes, never generated at start', () => {
    for (const name of ['ENCRYPTION_KEY', 'ADMIN_TOKEN', 'POSTGRES_PASSWORD'] as const) {
      const { [name]: _left, ...without } = secrets;
      expect(() => environmentOf(name === 'POSTGRES_PASSWORD' ? 'postgres' : 'api', without)).toThrow(`required variable ${name}`);
    }
    const a = loadConfig(environmentOf('api', secrets));
    const w = loadConfig(environmentOf('worker', secrets));
    expect(a.encryptionKey.equals(w.encryptionKey)).toBe(true);
    expect(a.encryptionKey.toString('base64')).toBe(secrets.ENCRYPTION_KEY);
    expect([a.adminTokenGenerated, w.adminTokenGenerated, a.adminToken === w.adminToken]).toEqual([false, false, true]);
    expect(read('docker-compose.yml')).not.toMatch(/\$\(|openssl rand[^\n]*docker compose up/);
    // The example lists every variable compose requires, with no value committed; `.env` stays out of git and images.
    const example = read('deploy.env.example');
    const required = [...read('docker-compose.yml').matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]);
    for (const name of new Set(required)) expect(example).toMatch(new RegExp(`^${name}=$`, 'm'));
    expect(read('.gitignore').split('\n')).toContain('.env');
    expect(read('.dockerignore').split('\n')).toContain('.env');
  });

  it('turns the sandbox on only with SANDBOX=true', () => {
    for (const name of ['api', 'worker']) {
      expect(loadConfig(environmentOf(name, secrets)).sandboxEnabled).toBe(false);
      expect(loadConfig(environmentOf(name, { ...secrets, SANDBOX: 'false' })).sandboxEnabled).toBe(false);
      expect(loadConfig(environmentOf(name, { ...secrets, SANDBOX: 'true' })).sandboxEnabled).toBe(true);
    }
    expect(read('deploy.env.example')).toMatch(/^SANDBOX=false$/m);
  });

  it('publishes the api on the host loopback only, unless told otherwise', () => {
    expect(api.ports!.map((p) => interpolate(p, secrets))).toEqual(['127.0.0.1:3000:3000']);
    expect(worker.ports).toBeUndefined();
    for (const s of [postgres, redis]) expect(s.ports).toBeUndefined();
  });

  it('checks health on readiness, each process on its own port', () => {
    for (const name of ['api', 'worker']) {
      const port = environmentOf(name, secrets).PORT;
      expect(compose.services[name].healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${port}/readyz`);
    }
    expect(postgres.healthcheck!.test.join(' ')).toContain('pg_isready');
    expect(redis.healthcheck!.test.join(' ')).toContain('ping');
    for (const name of ['api', 'worker']) {
      for (const dep of ['postgres', 'redis']) expect(compose.services[name].depends_on?.[dep]?.condition).toBe('service_healthy');
    }
  });

  it('keeps the data of PostgreSQL and Redis in named volumes', () => {
    const volume = (s: Service, target: string) => s.volumes?.find((v) => v.endsWith(`:${target}`))?.split(':')[0];
    expect(volume(postgres, '/var/lib/postgresql/data')).toBe('pgdata');
    expect(volume(redis, '/data')).toBe('redisdata');
    expect(Object.keys(compose.volumes).sort()).toEqual(['pgdata', 'redisdata']);
    expect(redis.command).toContain('--appendonly');
  });
});

/** A port free now (the api is given it before it starts: the internal URL names it). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const suite = runtime.redisUrl && runtime.databaseUrl ? describe : describe.skip;

suite('the compose topology without containers: an api process and a worker process (PostgreSQL, Redis)', () => {
  const schema = `t_${uniqueSuffix()}`;
  const children: ChildProcess[] = [];
  let api: string;
  let worker: string;

  /** One process of the service, as compose starts it (the built service, environment only). */
  function start(role: 'api' | 'worker', env: Record<string, string>): { child: ChildProcess; up: Promise<string> } {
    const child = spawn(process.execPath, [childServiceMain()], {
      cwd: root,
      env: {
        ...process.env, NODE_ENV: 'production', SERVICE_ROLE: role, DATABASE_URL: runtime.databaseUrl!, REDIS_URL: runtime.redisUrl!,
        DATABASE_SCHEMA: schema, LOG_LEVEL: 'warn', SYNC_INTERVAL_SECONDS: '0', ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    const up = new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /(?:worker|listening) on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.stderr!.on('data', (d) => { out += d; });
      child.on('exit', (code) => reject(new Error(`${role} exited ${code}: ${out}`)));
    });
    up.catch(() => undefined);
    return { child, up };
  }

  async function until<T>(what: string, probe: () => Promise<T | null>, tries = 240): Promise<T> {
    for (let i = 0; i < tries; i++) {
      const got = await probe().catch(() => null);
      if (got !== null) return got;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`gave up waiting for ${what}`);
  }

  const queuePrefix = `compose-${uniqueSuffix()}`;

  beforeAll(async () => {
    buildChildService();
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    const shared = {
      ENCRYPTION_KEY: randomBytes(32).toString('base64'), ADMIN_TOKEN: randomBytes(24).toString('hex'), QUEUE_PREFIX: queuePrefix,
      SANDBOX: 'true', SANDBOX_VENDOR_BASE_URL: api,
      // What callers use; in this test it resolves nowhere, so nothing may depend on it to reach the simulators.
      PUBLIC_URL: 'http://msp.public.invalid',
    };
    const apiProcess = start('api', { ...shared, PORT: String(port), HOST: '127.0.0.1' });
    // As compose does: the worker starts once the api listens (its migrations done).
    await until('the api to listen', async () => ((await fetch(`${api}/healthz`)).ok ? true : null));
    const early = await fetch(`${api}/readyz`);
    // Not ready before its first sandbox sync, which only the worker can run: compose must not make the worker wait for it.
    expect(early.status).toBe(503);
    const workerProcess = start('worker', { ...shared, PORT: '0' });
    worker = await workerProcess.up;
    await apiProcess.up;
    await until('the api to be ready', async () => ((await fetch(`${api}/readyz`)).status === 200 ? true : null));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(children.filter((c) => c.exitCode === null).map((c) => new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
      setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
    })));
    await dropSchema(runtime.databaseUrl!, schema);
    await forgetRedisKeys(runtime.redisUrl, `${queuePrefix}:`);
  }, 30_000);

  const call = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { ...init, headers: { 'x-api-key': DEFAULT_SANDBOX_API_KEY, 'content-type': 'application/json', ...init.headers } });
    return { status: res.status, body: await res.json() as any };
  };

  it('syncs the sandbox on the worker, through the internal URL, and serves it from the api', async () => {
    const tenants = await call(`${api}/tenants`);
    expect(tenants.status).toBe(200);
    const alpha = tenants.body.tenants.find((t: any) => t.slug === 'sandbox-alpha');
    expect(alpha).toBeDefined();
    const tickets = await call(`${api}/tenants/${alpha.id}/tickets?limit=5`);
    expect(tickets.status).toBe(200);
    expect(tickets.body.tickets.length).toBeGreaterThan(0);

    const db = new Client({ connectionString: runtime.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT base_url FROM "${schema}".connections`);
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.base_url).toMatch(new RegExp(`^${api.replace(/[.]/g, '\\.')}/sandbox-vendors/`));
    } finally {
      await db.end();
    }

    // The worker made the vendor calls (its own /metrics) and the api's simulators answered them.
    const workerMetrics = await (await fetch(`${worker}/metrics`)).text();
    expect(workerMetrics).toMatch(/^msp_sync_duration_seconds_count\{kind="psa",connector="connectwise",outcome="ok"\} [1-9]/m);
    expect(workerMetrics).toMatch(/^msp_vendor_requests_total\{connector="connectwise",status_class="2xx"\} [1-9]/m);
    const apiMetrics = await (await fetch(`${api}/metrics`)).text();
    expect(apiMetrics).toMatch(/^http_requests_total\{method="GET",route="\/sandbox-vendors",status="200"\} [1-9]/m);
    expect(apiMetrics).not.toMatch(/^msp_sync_duration_seconds_count/m);
  });

  it('commits a write on the worker through the internal URL', async () => {
    const { body: { tenants } } = await call(`${api}/tenants`);
    const alpha = tenants.find((t: any) => t.slug === 'sandbox-alpha');
    // A company name the PSA holds once (the REST surface has no company list).
    const db = new Client({ connectionString: runtime.databaseUrl });
    await db.connect();
    const { rows } = await db.query(
      `SELECT name FROM "${schema}".companies WHERE tenant_id = $1 GROUP BY name HAVING count(*) = 1 ORDER BY name LIMIT 1`, [alpha.id],
    ).finally(() => db.end());
    const name = rows[0].name as string;
    const created = await call(`${api}/tenants/${alpha.id}/tickets`, {
      method: 'POST', body: JSON.stringify({ company_name: name, summary: 'Written by the worker', dry_run: false, idempotency_key: `compose-${uniqueSuffix()}` }),
    });
    expect(created.status).toBe(201);
    expect(created.body.ticket_ref).toBeTruthy();
  });
});
