/**
 * Slow clients are bounded (docs/architecture.md, Faults an operator will meet; src/http/connection-limits.ts):
 * a body or headers trickling slower than the server's time limit get 408 and the connection closed,
 * and one address holds no more than its cap of open connections (the next is answered 503 with
 * Retry-After), while an answer that takes longer than the limit to compute is not cut.
 */
import net from 'node:net';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
/** Above what the sandbox's own calls to its simulators on this server hold open at once. */
const CAP = 64;

beforeAll(async () => {
  svc = await startTestService({}, { env: { HTTP_REQUEST_TIMEOUT_MS: '1500', HTTP_HEADERS_TIMEOUT_MS: '1000', MAX_CONNECTIONS_PER_ADDRESS: String(CAP) } });
}, 120_000);
afterAll(async () => { await svc?.close(); });

interface RawClient { socket: net.Socket; received: () => string; closed: Promise<void> }

/** A raw TCP client of the service: what it received, and when the server closed it. */
async function connect(): Promise<RawClient> {
  const { port } = new URL(svc.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let text = '';
  socket.on('data', (d) => { text += d.toString('utf8'); });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => { socket.once('connect', () => resolve()); socket.once('error', reject); });
  return { socket, received: () => text, closed };
}

/** Sends `bytes` one at a time every `everyMs` until the server closes the connection; how many it sent. */
async function trickle(c: RawClient, bytes: string, everyMs: number): Promise<number> {
  let open = true;
  void c.closed.then(() => { open = false; });
  let sent = 0;
  for (; sent < bytes.length && open; sent++) {
    c.socket.write(bytes[sent]);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  await Promise.race([c.closed, new Promise((r) => setTimeout(r, 5000))]);
  return sent;
}

it('answers 408 and closes a connection whose body trickles in slower than the request time limit', async () => {
  const body = JSON.stringify({ company_name: 'Nobody', summary: 'slow', dry_run: true }).padEnd(200, ' ');
  const c = await connect();
  c.socket.write(`POST /tenants/${svc.alphaId}/tickets HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${svc.key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
  // One byte every 100 ms: the whole body would take 20 s.
  const sent = await trickle(c, body, 100);
  expect(sent).toBeLessThan(body.length);
  expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  expect(JSON.parse(c.received().split('\r\n\r\n')[1])).toMatchObject({ code: 'request_timeout', status: 408 });
}, 30_000);

it('answers 408 and closes a connection whose headers trickle in', async () => {
  const head = `GET /tenants/${svc.alphaId}/tickets HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${svc.key}\r\nx-padding: ${'a'.repeat(150)}\r\n\r\n`;
  const c = await connect();
  const sent = await trickle(c, head, 100);
  expect(sent).toBeLessThan(head.length);
  expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
}, 30_000);

it('keeps answering a request whose answer takes longer than the request time limit once it has arrived', async () => {
  // The simulator (on this same server) answers late: the request was whole long before.
  const cw = svc.services.simulators!.connectwise;
  cw.faults.setLatency(2500);
  try {
    const res = await fetch(`${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0/system/info`);
    expect(res.status).not.toBe(408);
    expect(res.status).toBeLessThan(500);
  } finally {
    cw.faults.clear();
  }
}, 30_000);

it('holds each address to its cap of open connections: the next is answered 503 with Retry-After, and a freed slot serves again', async () => {
  // The service's own keep-alive connections to its simulators count too: open until one is refused.
  const held: RawClient[] = [];
  try {
    let refused: RawClient | null = null;
    for (let i = 0; i <= CAP && !refused; i++) {
      // One request answered, then the connection stays open, idle (keep-alive).
      const c = await connect();
      c.socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      for (let w = 0; w < 100 && !/\r\n\r\n/.test(c.received()); w++) await new Promise((r) => setTimeout(r, 20));
      if (/^HTTP\/1\.1 503 /.test(c.received())) refused = c;
      else held.push(c);
    }
    expect(refused).not.toBeNull();
    expect(held.length).toBeLessThanOrEqual(CAP);
    expect(refused!.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused!.received()).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(JSON.parse(refused!.received().split('\r\n\r\n')[1])).toMatchObject({ code: 'service_unavailable' });
    held.pop()!.socket.destroy();
    // The freed slot is counted free once the server has seen the close: bounded retries.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await fetch(`${svc.url}/healthz`, { headers: { connection: 'close' } }).catch(() => ({ status: 0 }))).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  } finally {
    for (const c of held) c.socket.destroy();
  }
}, 60_000);
