/** Waiting on webhook deliveries in tests: a delivery is settled once its row leaves `pending`. */
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
