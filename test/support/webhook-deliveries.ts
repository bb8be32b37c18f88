/** Waiting on webhook deliveries in tests: a delivery is settled once its row leaves `pending`. */
import type { DataSource } from 'typeorm';
import { WebhookDelivery } from '../../entities';

/** The delivery once it is no longer pending (delivered, failed or gave up); throws after `timeoutMs`. */
export async function settledDelivery(ds: DataSource, deliveryId: string, timeoutMs = 20_000): Promise<WebhookDelivery> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await ds.getRepository(WebhookDelivery).findOneByOrFail({ id: deliveryId });
    if (d.status !== 'pending') return d;
    if (Date.now() > until) throw new Error(`delivery ${deliveryId} still pending after ${timeoutMs} ms (attempts ${d.attempts}, last error ${d.lastError})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
