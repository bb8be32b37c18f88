/**
 * The client side of the network-fault harness: the calls an ISV makes while a link is cut or slowed
 * (a sync through the sandbox trigger, a ticket create retried with its idempotency key until it gets a
 * final answer, feed and list reads), each timed; the webhook receiver; and what the sandbox's ConnectWise
 * simulator holds (the truth the feed and the vendor writes are compared with). Client calls go over the
 * client's own link to the api, which no fault touches.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One client call: what it was, what came back (a status, or the error that ended it) and how long it took. */
export interface CallRecord {
  what: 'simulate' | 'commit' | 'read' | 'sync';
  outcome: string;
  ms: number;
}

/** A call that took this long is given up (and counted as hanging that long). */
export const CALL_TIMEOUT_MS = 60_000;
const CW_API = '/sandbox-vendors/connectwise/v4_6_release/apis/3.0';
const CW_AUTH = {
  authorization: `Basic ${Buffer.from('sandbox+sandbox-public:sandbox-private').toString('base64')}`,
  clientid: '00000000-0000-0000-0000-000000000000',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class IsvClient {
  calls: CallRecord[] = [];

  constructor(private readonly base: string, private readonly key: string) {}

  async call(what: CallRecord['what'], method: string, path: string, body?: unknown): Promise<{ status: number | null; body: any; retryAfter: number | null }> {
    const started = performance.now();
    let status: number | null = null;
    let parsed: any = null;
    let retryAfter: number | null = null;
    let outcome: string;
    try {
      const res = await fetch(`${this.base}${path}`, {
        method, signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        headers: { 'x-api-key': this.key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      status = res.status;
      const header = res.headers.get('retry-after');
      retryAfter = header !== null && /^\d+$/.test(header) ? Number(header) : null;
      parsed = await res.json().catch(() => null);
      outcome = String(res.status);
    } catch (err) {
      outcome = (err as Error).name === 'TimeoutError' ? 'timeout' : 'conn-error';
    }
    this.calls.push({ what, outcome, ms: performance.now() - started });
    return { status, body: parsed, retryAfter };
  }

  /**
   * A ticket create with one idempotency key, sent again (honouring Retry-After, at most 5 s apart) until
   * a final answer (2xx, or a 4xx other than 409 in progress and 429) or `deadline`. Answers the final status, or null.
   */
  async commitUntilFinal(tenantId: string, companyName: string, key: string, deadline: number): Promise<{ final: number | null; ticketRef: string | null; body: any }> {
    for (let attempt = 0; attempt < 200 && performance.now() < deadline; attempt++) {
      const r = await this.call('commit', 'POST', `/tenants/${tenantId}/tickets`, {
        company_name: companyName, summary: `netfault ${key}`, dry_run: false, idempotency_key: key,
      });
      const s = r.status;
      if (s !== null && ((s >= 200 && s < 300) || (s >= 400 && s < 500 && s !== 409 && s !== 429))) {
        return { final: s, ticketRef: r.body?.ticket_ref ?? r.body?.results?.[0]?.ticket_ref ?? null, body: r.body };
      }
      await sleep(Math.min(5, r.retryAfter ?? 1) * 1000);
    }
    return { final: null, ticketRef: null, body: null };
  }
}

/** The sandbox's ConnectWise, read the way the vendor is read (through the simulator's own API on the api host). */
export class ConnectWiseView {
  constructor(private readonly base: string) {}

  async tickets(): Promise<Array<{ id: number; summary: string; closedFlag?: boolean; status?: { name?: string } }>> {
    const all: any[] = [];
    for (let page = 1; page <= 20; page++) {
      const res = await fetch(`${this.base}${CW_API}/service/tickets?pageSize=1000&page=${page}`, { headers: CW_AUTH, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`simulator tickets: ${res.status} ${await res.text()}`);
      const rows = await res.json() as any[];
      all.push(...rows);
      if (rows.length < 1000) break;
    }
    return all;
  }

  async ticketStatus(id: number): Promise<string | null> {
    const res = await fetch(`${this.base}${CW_API}/service/tickets/${id}`, { headers: CW_AUTH, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`simulator ticket ${id}: ${res.status}`);
    return ((await res.json()) as any).status?.name ?? null;
  }

  async companyNames(): Promise<string[]> {
    const res = await fetch(`${this.base}${CW_API}/company/companies?pageSize=1000`, { headers: CW_AUTH, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`simulator companies: ${res.status}`);
    const names = ((await res.json()) as any[]).map((c) => String(c.name));
    return names.filter((n) => names.indexOf(n) === names.lastIndexOf(n));
  }
}

/** The ISV's webhook receiver on the client's host: answers 200 and keeps each delivery's webhook-id (the event id). */
export class WebhookReceiver {
  readonly received = new Map<string, number>();
  private server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '');
      if (id) this.received.set(id, (this.received.get(id) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async listen(address: string): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, address, resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Every ticket event of the feed after `afterId` (null: from the start), in feed order; throws when the feed does not answer. */
export async function feedAfter(client: IsvClient, tenantId: string, afterId: string | null): Promise<Array<{ id: string; kind: string; subject_ref: string | null }>> {
  const events: any[] = [];
  let after = afterId;
  for (let page = 0; page < 200; page++) {
    const r = await client.call('read', 'GET', `/tenants/${tenantId}/connections/events?kind=ticket&limit=500${after ? `&after=${after}` : ''}`);
    if (r.status !== 200) throw new Error(`the feed answered ${r.status ?? 'nothing'}: ${JSON.stringify(r.body)}`);
    const items = r.body.events as any[];
    events.push(...items);
    if (items.length < 500) return events;
    after = items[items.length - 1].id;
  }
  throw new Error('the feed did not end in 200 pages');
}
