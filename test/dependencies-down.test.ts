/**
 * Dependencies that go away (docs/architecture.md, Faults an operator will meet): with Redis or the
 * database unreachable, REST, GraphQL and MCP answer 503 `service_unavailable` with Retry-After within
 * seconds, never 500; a commit refused during a Redis outage lands once, within seconds, when retried
 * with its key after Redis is back (it waited out a 90 s lease before). Redis is the test's own
 * redis-server, killed and restarted; the database is reached through a proxy the test cuts, so the
 * shared servers are never stopped. The embedded default loses its database process.
 */
import { CuttableProxy, OwnRedis } from './support/dependency-faults';
import { freePort, runtime, uniqueSuffix } from './support/runtime';
import { startTestService, type TestService } from './support/service';

const onPostgres = runtime.databaseUrl && runtime.redisUrl ? describe : describe.skip;
const onEmbedded = runtime.databaseUrl ? describe.skip : describe;

/** A request must answer within this, or the test fails: a dependency that is gone is no reason to hang. */
const BOUND_MS = 15_000;
const bounded = () => ({ signal: AbortSignal.timeout(BOUND_MS) });

function expectUnavailable(res: { status: number; body: any; headers: Headers }): void {
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: 'service_unavailable', status: 503 });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
}

async function graphqlWithKey(svc: TestService, query: string, variables: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': svc.key }, body: JSON.stringify({ query, variables }), ...bounded(),
  });
  return res.json();
}

/** An MCP tools/call over the stateless JSON answer: its HTTP status and the Error envelope of a tool error (or the body). */
async function mcpTool(svc: TestService, name: string, args: Record<string, unknown>): Promise<{ status: number; error: any }> {
  const res = await fetch(`${svc.url}/`, {
    method: 'POST', ...bounded(),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': svc.key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json() as any;
  const text = body?.result?.isError ? body.result.content[0].text : null;
  return { status: res.status, error: text ? JSON.parse(text) : body };
}

/** Retries `call` (each bounded) until it answers something other than 503, at most `tries` times. */
async function untilNot503<T extends { status: number }>(call: () => Promise<T>, tries = 40): Promise<T> {
  let last = await call();
  for (let i = 0; i < tries && last.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 250));
    last = await call();
  }
  return last;
}

/** The name of a company of alpha's ConnectWise that only one company has. */
function uniqueCompany(svc: TestService): string {
  const counts = new Map<string, number>();
  for (const c of (svc.services.simulators!.connectwise as any).list('sandbox-alpha', 'companies') as { name: string }[]) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  return [...counts.entries()].find(([, n]) => n === 1)![0];
}

onPostgres('Redis down', () => {
  let redis: OwnRedis;
  let svc: TestService;
  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    // No per-key limit (it counts on Redis): the commit itself meets the outage, its key reserved first.
    svc = await startTestService({ redisUrl: redis.url }, { env: { RATE_LIMIT_PER_MINUTE: '0' } });
  }, 120_000);
  afterAll(async () => {
    await redis?.start().catch(() => undefined);
    await svc?.close();
    await redis?.stop();
  });

  it('a commit answers 503 with Retry-After at once, and the same key lands exactly once within seconds of Redis coming back', async () => {
    const summary = `Redis outage ${uniqueSuffix()}`;
    const body = { company_name: uniqueCompany(svc), summary, dry_run: false, idempotency_key: `redis-down-${uniqueSuffix()}` };
    const commit = () => svc.api(`/tenants/${svc.alphaId}/tickets`, { method: 'POST', json: body, ...bounded() });
    await redis.stop();
    expectUnavailable(await commit());
    // GraphQL says the same of a commit of its own (another key: this one is the REST commit's to retry).
    const graph = await graphqlWithKey(svc, 'mutation($t: ID!, $b: CreateTicketBody!) { create_ticket(tenant_id: $t, input: $b) { __typename } }',
      { t: svc.alphaId, b: { ...body, idempotency_key: `${body.idempotency_key}-graphql` } });
    expect(graph.errors[0].extensions).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(graph.errors[0].extensions.retry_after_seconds).toBeGreaterThan(0);

    await redis.start();
    const landed = await untilNot503(commit);
    expect(landed.status).toBe(201);
    const ticketRef = landed.body.ticket_ref;
    const cw = svc.services.simulators!.connectwise as any;
    expect((cw.list('sandbox-alpha', 'tickets') as { summary: string }[]).filter((t) => t.summary === summary)).toHaveLength(1);
    const replay = await commit();
    expect(replay).toMatchObject({ status: 201, body: { idempotent_replay: true, ticket_ref: ticketRef } });
  }, 90_000);
});

onPostgres('the database cut off', () => {
  let proxy: CuttableProxy;
  let svc: TestService;
  beforeAll(async () => {
    proxy = new CuttableProxy(Number(new URL(runtime.databaseUrl!).port || 5432));
    await proxy.start();
    const url = new URL(runtime.databaseUrl!);
    url.host = `127.0.0.1:${proxy.port}`;
    svc = await startTestService({ databaseUrl: url.toString() }, { database: { databaseUrl: url.toString(), schema: `t_${uniqueSuffix()}`, dropSchemaOnClose: true } });
  }, 120_000);
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await svc?.close();
    await proxy?.cut();
  });

  it('reads and writes answer 503 with Retry-After on REST, GraphQL and MCP; once it is back they answer again', async () => {
    const tickets = () => svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`, bounded());
    expect((await tickets()).status).toBe(200);
    await proxy.cut();
    try {
      expectUnavailable(await tickets());
      expectUnavailable(await svc.api(`/tenants/${svc.alphaId}/tickets`, {
        method: 'POST', json: { company_name: 'Anyone', summary: 'cut', dry_run: false, idempotency_key: `cut-${uniqueSuffix()}` }, ...bounded(),
      }));
      const graph = await graphqlWithKey(svc, 'query($t: ID!) { list_tickets(tenant_id: $t, limit: 1) { __typename } }', { t: svc.alphaId });
      expect(graph.errors[0].extensions).toMatchObject({ code: 'service_unavailable', status: 503 });
      const tool = await mcpTool(svc, 'list_tickets', { tenant_id: svc.alphaId, limit: 1 });
      expect(tool.error).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect((await fetch(`${svc.url}/readyz`, bounded())).status).toBe(503);
    } finally {
      await proxy.restore();
    }
    expect((await untilNot503(tickets)).status).toBe(200);
  }, 90_000);
});

onEmbedded('the embedded database process gone', () => {
  let svc: TestService;
  beforeAll(async () => { svc = await startTestService(); }, 120_000);
  afterAll(async () => { await svc?.close().catch(() => undefined); });

  it('reads answer 503 with Retry-After, not 500', async () => {
    const pid = svc.services.db.embeddedPid!;
    expect(pid).toBeGreaterThan(0);
    const exited = new Promise<void>((resolve) => {
      const timer = setInterval(() => { try { process.kill(pid, 0); } catch { clearInterval(timer); resolve(); } }, 20);
    });
    process.kill(pid, 'SIGKILL');
    await exited;
    expectUnavailable(await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`, bounded()));
    expectUnavailable(await svc.api(`/tenants/${svc.alphaId}/billing/costs?limit=1`, bounded()));
  }, 60_000);
});
