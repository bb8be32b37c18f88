/** Webhook deliveries in tests: a loopback receiver, and waiting until a delivery leaves `pending`. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataSource, FindOptionsWhere } from 'typeorm';
import { WebhookDelivery } from '../../entities';

/**
 * The delivery `where` names once `reached` holds for it (a row not made yet is waited for too); throws after
 * `timeoutMs`, saying what it waited for and how the delivery stood.
 */
export async function deliveryWhen(
  ds: DataSource, where: FindOptionsWhere<WebhookDelivery>, reached: (d: WebhookDelivery) => boolean, waitedFor: string, timeoutMs = 20_000,
): Promise<WebhookDelivery> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await ds.getRepository(WebhookDelivery).findOneBy(where);
    if (d && reached(d)) return d;
    if (Date.now() > until) {
      throw new Error(`delivery ${JSON.stringify(where)} not ${waitedFor} after ${timeoutMs} ms (${d ? `status ${d.status}, attempts ${d.attempts}, last error ${d.lastError}` : 'no row'})`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The delivery once it is no longer pending (delivered, failed or gave up); throws after `timeoutMs`. */
export function settledDelivery(ds: DataSource, deliveryId: string, timeoutMs = 20_000): Promise<WebhookDelivery> {
  return deliveryWhen(ds, { id: deliveryId }, (d) => d.status !== 'pending', 'settled', timeoutMs);
}

/** A loopback webhook receiver that answers 200 and keeps what it was sent, parsed as JSON. */
export interface WebhookReceiver { url: string; received: { path: string; body: any }[]; close(): Promise<void> }

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())); },
  };
}
