/**
 * Ordered, windowed webhook delivery (src/webhooks/delivery-lanes.ts) against a receiver on loopback:
 * a burst reaches the receiver within the documented order guarantee, a failed try holds the lane
 * until its retry got through, delivery starts from the commit itself, connections are reused, and a
 * reused connection never carries a try the address guard refuses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection } from '../entities';
import { eventDraft } from '../src/events/change-detector';
import { systemResolver } from '../src/webhooks/ssrf-guard';
import { DEFAULT_DELIVERY_WINDOW } from '../src/webhooks/delivery-lanes';
import { startTestService, type TestService } from './support/service';
import { settledDelivery } from './support/webhook-deliveries';

interface Arrival { id: string; position: number; status: number }

/** A receiver that answers each POST after `delay()` ms with `answer(id, try)`, and records what it saw. */
class OrderedReceiver {
  readonly arrivals: Arrival[] = [];
  /** Event ids answered 2xx so far. */
  readonly answered = new Set<string>();
  /** For each arrival: the event ids answered 2xx before it arrived. */
  readonly answeredBefore: Set<string>[] = [];
  /** Each answer sent: the event, its status, and how many requests had arrived by then. */
  readonly answers: { id: string; status: number; arrivedSoFar: number }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  connections = 0;
  private readonly tries = new Map<string, number>();
  private server!: http.Server;
  url = '';

  constructor(
    private readonly delay: () => number = () => 0,
    private readonly answer: (id: string, attempt: number) => number = () => 200,
  ) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; position: string };
        const attempt = (this.tries.get(event.id) ?? 0) + 1;
        this.tries.set(event.id, attempt);
        const status = this.answer(event.id, attempt);
        this.arrivals.push({ id: event.id, position: Number(event.position), status });
        this.answeredBefore.push(new Set(this.answered));
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight--;
          if (status >= 200 && status < 300) this.answered.add(event.id);
          this.answers.push({ id: event.id, status, arrivedSoFar: this.arrivals.length });
          res.writeHead(status).end();
        }, this.delay());
      });
    });
    this.server.on('connection', () => { this.connections++; });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let svc: TestService;
let psa: string;
const WINDOW = 4;

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  svc.services.webhooks.retryScale = 0.0001;
  svc.services.webhooks.lanes.window = WINDOW;
  psa = (await svc.services.ds.getRepository(Connection).findOneByOrFail({ tenantId: svc.alphaId, kind: 'psa' })).id;
}, 120_000);
afterAll(async () => {
  await svc?.close();
});

const hookPath = `/tenants/${'{t}'}/ticket-events/webhook`;
async function register(url: string): Promise<string> {
  const res = await svc.api(hookPath.replace('{t}', svc.alphaId), { method: 'POST', json: { url } });
  expect(res.status).toBe(201);
  return res.body.id;
}
async function remove(id: string): Promise<void> {
  expect((await svc.api(`${hookPath.replace('{t}', svc.alphaId)}/${id}`, { method: 'DELETE' })).status).toBe(204);
}

/** `n` events written in one transaction the way sync writes them, then announced; their ids in feed order. */
async function burst(n: number, label: string): Promise<string[]> {
  const drafts = Array.from({ length: n }, (_, i) => eventDraft({
    kind: 'ticket.updated', connectionId: psa, dedupeKey: `burst:${label}:${i}`, summary: `Ticket ${i} updated`, subjectRef: String(i),
  }));
  const ids = await svc.services.ds.transaction((m) => svc.services.events.insert(m, svc.alphaId, drafts));
  await svc.services.events.emitCommitted(svc.alphaId, ids);
  const rows: { id: string }[] = await svc.services.ds.query('SELECT id FROM events WHERE id = ANY($1::uuid[]) ORDER BY seq', [ids]);
  return rows.map((r) => r.id);
}

async function allSettled(webhookId: string, eventIds: string[], timeoutMs = 60_000): Promise<void> {
  const rows: { id: string }[] = await svc.services.ds.query('SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = ANY($2::uuid[])', [webhookId, eventIds]);
  expect(rows).toHaveLength(eventIds.length);
  for (const r of rows) await settledDelivery(svc.services.ds, r.id, timeoutMs);
}

describe('a burst to one receiver', () => {
  it('is sent in feed order with at most the window unanswered, each event once', async () => {
    const receiver = await new OrderedReceiver(() => Math.floor(Math.random() * 6)).start();
    const hook = await register(`${receiver.url}/burst`);
    try {
      const feed = await burst(500, 'order');
      await allSettled(hook, feed);
      const rank = new Map(feed.map((id, i) => [id, i]));
      // Every event arrived exactly once, and answered.
      expect(receiver.arrivals.map((a) => a.id).sort()).toEqual([...feed].sort());
      expect(receiver.answered.size).toBe(feed.length);
      // Positions are the feed's: sorting by them gives the feed order.
      expect([...receiver.arrivals].sort((a, b) => a.position - b.position).map((a) => a.id)).toEqual(feed);
      // Sent in feed order, at most the window unanswered: when position n arrives, fewer than `window` earlier
      // positions are still unanswered (so at most window - 1 of them can arrive after it, on other connections).
      receiver.arrivals.forEach((a, k) => {
        const r = rank.get(a.id)!;
        const unanswered = feed.slice(0, r).filter((id) => !receiver.answeredBefore[k].has(id));
        expect([r, unanswered.length < WINDOW]).toEqual([r, true]);
      });
      // The window was used, and never exceeded.
      expect(receiver.maxInFlight).toBeGreaterThan(1);
      expect(receiver.maxInFlight).toBeLessThanOrEqual(WINDOW);
      // Keep-alive: 500 deliveries over at most the window's connections.
      expect(receiver.connections).toBeLessThanOrEqual(WINDOW);
    } finally {
      await remove(hook);
      await receiver.close();
    }
  }, 120_000);

  it('a 500 holds the lane: nothing is started after the failure until its retry was delivered', async () => {
    let failed: string | null = null;
    const receiver = await new OrderedReceiver(() => Math.floor(Math.random() * 3), (id, attempt) => {
      if (failed === null && attempt === 1 && receiver.arrivals.length === 10) failed = id;
      return id === failed && attempt === 1 ? 500 : 200;
    }).start();
    const hook = await register(`${receiver.url}/retry`);
    // The retry is due well after the other 29 could all have been sent: only the held lane keeps them back.
    svc.services.webhooks.retryScale = 0.05;
    try {
      const feed = await burst(40, 'retry');
      await allSettled(hook, feed);
      expect(failed).not.toBeNull();
      const rank = new Map(feed.map((id, i) => [id, i]));
      const f = rank.get(failed!)!;
      const tries = receiver.arrivals.map((a, k) => ({ ...a, k })).filter((a) => a.id === failed);
      expect(tries.map((t) => t.status)).toEqual([500, 200]);
      // Once the 500 was answered, only tries already on their way, or sent while the answer was on its way
      // back, arrive before the retry: at most 2 x (window - 1), though the retry waits (5 s scaled) for its turn.
      const answered500 = receiver.answers.find((x) => x.id === failed && x.status === 500)!;
      const between = receiver.arrivals.slice(answered500.arrivedSoFar, tries[1].k);
      expect(between.length).toBeLessThanOrEqual(2 * (WINDOW - 1));
      for (const a of between) expect(rank.get(a.id)!).toBeGreaterThan(f);
      // After the retry, the rest in feed order from where the window stood.
      const after = receiver.arrivals.slice(tries[1].k + 1).map((a) => rank.get(a.id)!);
      for (const r of after) expect(r).toBeGreaterThan(f);
      // Every event delivered once (the failed one twice tried), the log says so.
      expect(new Set(receiver.arrivals.filter((a) => a.status === 200).map((a) => a.id)).size).toBe(feed.length);
      const [row] = await svc.services.ds.query('SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2', [hook, failed]);
      expect(row).toEqual({ status: 'delivered', attempts: 2 });
    } finally {
      svc.services.webhooks.retryScale = 0.0001;
      await remove(hook);
      await receiver.close();
    }
  }, 120_000);
});

describe('a window of one', () => {
  it('the receiver sees exactly the feed order', async () => {
    svc.services.webhooks.lanes.window = 1;
    const receiver = await new OrderedReceiver(() => Math.floor(Math.random() * 3)).start();
    const hook = await register(`${receiver.url}/strict`);
    try {
      const feed = await burst(60, 'strict');
      await allSettled(hook, feed);
      expect(receiver.arrivals.map((a) => a.id)).toEqual(feed);
      expect(receiver.maxInFlight).toBe(1);
    } finally {
      svc.services.webhooks.lanes.window = WINDOW;
      await remove(hook);
      await receiver.close();
    }
  });
});

describe('the default window', () => {
  it('fills up to the default window and never beyond, over as many connections at most', async () => {
    svc.services.webhooks.lanes.window = DEFAULT_DELIVERY_WINDOW;
    // Answers nothing until the window's worth of tries is waiting, then all of them: the lane can only go
    // on once the receiver has held exactly the window, and a try beyond it would be seen here.
    const held: http.ServerResponse[] = [];
    let most = 0;
    let connections = 0;
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      req.on('data', () => undefined);
      req.on('end', () => {
        received.push(String(req.headers['webhook-id']));
        held.push(res);
        most = Math.max(most, held.length);
        if (held.length === DEFAULT_DELIVERY_WINDOW) for (const r of held.splice(0)) r.writeHead(204).end();
      });
    });
    server.on('connection', () => { connections++; });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hook = await register(`http://127.0.0.1:${(server.address() as AddressInfo).port}/window`);
    try {
      const feed = await burst(DEFAULT_DELIVERY_WINDOW * 8, 'default-window');
      await allSettled(hook, feed);
      expect(received.sort()).toEqual([...feed].sort());
      expect(most).toBe(DEFAULT_DELIVERY_WINDOW);
      expect(connections).toBeLessThanOrEqual(DEFAULT_DELIVERY_WINDOW);
    } finally {
      svc.services.webhooks.lanes.window = WINDOW;
      await remove(hook);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('when delivery starts', () => {
  it('from the commit itself: no sweep and no restart is needed for a committed event to be sent', async () => {
    const receiver = await new OrderedReceiver().start();
    const hook = await register(`${receiver.url}/prompt`);
    // The only sweep (resumePending, run at start) is not run again: the commit's wake-up alone sends it.
    const resume = jest.spyOn(svc.services.webhooks, 'resumePending');
    try {
      const [eventId] = await burst(1, 'prompt');
      await allSettled(hook, [eventId]);
      expect(receiver.arrivals.map((a) => a.id)).toEqual([eventId]);
      expect(resume).not.toHaveBeenCalled();
    } finally {
      resume.mockRestore();
      await remove(hook);
      await receiver.close();
    }
  });
});

describe('reused connections and the address guard', () => {
  it('keeps the connection for the next try, yet refuses a name that now resolves to a private address', async () => {
    const receiver = await new OrderedReceiver().start();
    const port = new URL(receiver.url).port;
    let answer = '127.0.0.1';
    svc.services.webhooks.resolve = async (host) => (host === 'hooks.example.test' ? [{ address: answer, family: 4 }] : []);
    try {
      const hook = await register(`http://hooks.example.test:${port}/reuse`);
      const first = await burst(1, 'reuse-1');
      await allSettled(hook, first);
      const second = await burst(1, 'reuse-2');
      await allSettled(hook, second);
      // Two deliveries, one connection: kept alive and reused.
      expect(receiver.arrivals.map((a) => a.id)).toEqual([...first, ...second]);
      expect(receiver.connections).toBe(1);

      // The name now points at a private address: refused before any request, the open connection unused.
      answer = '10.0.0.7';
      const third = await burst(1, 'reuse-3');
      await allSettled(hook, third);
      const [row] = await svc.services.ds.query('SELECT status, last_error FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2', [hook, third[0]]);
      expect(row).toEqual({ status: 'failed', last_error: 'blocked: private address' });
      expect(receiver.arrivals).toHaveLength(2);

      // Loopback no longer allowed (the flag off): refused too, though a connection to it is open.
      answer = '127.0.0.1';
      svc.services.config.webhookAllowLoopback = false;
      const fourth = await burst(1, 'reuse-4');
      await allSettled(hook, fourth);
      const [refused] = await svc.services.ds.query('SELECT status, last_error FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2', [hook, fourth[0]]);
      expect(refused.status).toBe('failed');
      expect(receiver.arrivals).toHaveLength(2);
      svc.services.config.webhookAllowLoopback = true;
      await remove(hook);
    } finally {
      svc.services.config.webhookAllowLoopback = true;
      svc.services.webhooks.resolve = systemResolver;
      await receiver.close();
    }
  });
});
