/**
 * POST /sandbox/simulate (docs/architecture.md, Sandbox): each change kind made in the simulator as the MSP would, synced,
 * answered with the events it produced; a webhook on a loopback receiver gets the delivery.
 */
import { randomUUID } from 'node:crypto';
import { Tenant } from '../entities';
import { startTestService, type TestService } from './support/service';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-deliveries';

let svc: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  receiver = await startWebhookReceiver();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const simulate = (change: Record<string, unknown>, tenantId = svc.alphaId, key?: string) =>
  svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: tenantId, change }, ...(key ? { key } : {}) });

describe('POST /sandbox/simulate', () => {
  it('a ticket status change gives ticket.updated, and the webhook receives it', async () => {
    const hook = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiver.url}/hook` } });
    expect(hook.status).toBe(201);
    const res = await simulate({ kind: 'ticket_status' });
    expect(res.status).toBe(200);
    expect(res.body.events).toHaveLength(1);
    expect(res.body.events[0]).toMatchObject({ kind: 'ticket.updated', vendor_id: res.body.target_id, previous_status: 'new', new_status: 'in_progress' });
    const eventId = res.body.events[0].id;
    // The delivery is a job: wait for it to arrive (bounded), then look at what arrived.
    for (let i = 0; i < 200 && !receiver.received.some((r) => JSON.stringify(r.body).includes(eventId)); i++) await new Promise((r) => setTimeout(r, 50));
    const delivery = receiver.received.find((r) => JSON.stringify(r.body).includes(eventId));
    expect(delivery?.path).toBe('/hook');
    expect(JSON.stringify(delivery!.body)).toContain('ticket.updated');
  });

  it('a note gives ticket.noted', async () => {
    const res = await simulate({ kind: 'ticket_note', target_id: '30102', text: 'Called the customer' });
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: any) => [e.kind, e.vendor_id])).toEqual([['ticket.noted', '30102']]);
  });

  it('a close and a reopen give ticket.closed and ticket.reopened', async () => {
    const closed = await simulate({ kind: 'ticket_close', target_id: '30103' });
    expect(closed.status).toBe(200);
    expect(closed.body.events.map((e: any) => [e.kind, e.vendor_id])).toEqual([['ticket.closed', '30103']]);
    const reopened = await simulate({ kind: 'ticket_reopen', target_id: '30103' });
    expect(reopened.status).toBe(200);
    expect(reopened.body.events.map((e: any) => [e.kind, e.vendor_id])).toEqual([['ticket.reopened', '30103']]);
    // With no target: a closed fixture ticket is reopened.
    const byDefault = await simulate({ kind: 'ticket_reopen' });
    expect(byDefault.body.events.map((e: any) => e.kind)).toEqual(['ticket.reopened']);
  });

  it('a device going offline gives device.updated', async () => {
    const res = await simulate({ kind: 'device_offline' });
    expect(res.status).toBe(200);
    const updated = res.body.events.filter((e: any) => e.kind === 'device.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].vendor_id).toBe(res.body.target_id);
    expect(updated[0].summary).toMatch(/went offline$/);
  });

  it('a company renamed gives company.updated', async () => {
    const res = await simulate({ kind: 'company_renamed', name: 'Renamed Holdings' });
    expect(res.status).toBe(200);
    expect(res.body.events).toHaveLength(1);
    expect(res.body.events[0]).toMatchObject({ kind: 'company.updated', vendor_id: res.body.target_id });
    expect(res.body.events[0].summary).toMatch(/renamed to Renamed Holdings$/);
  });

  it('the limited PSA (beta): status, note, close, reopen; a rename raises no event this key may see', async () => {
    const kinds = async (change: Record<string, unknown>) => {
      const res = await simulate(change, svc.betaId);
      expect(res.status).toBe(200);
      return res.body.events.map((e: any) => e.kind);
    };
    expect(await kinds({ kind: 'ticket_status' })).toEqual(['ticket.updated']);
    expect(await kinds({ kind: 'ticket_note', target_id: '1002' })).toEqual(['ticket.noted']);
    expect(await kinds({ kind: 'ticket_close', target_id: '1003' })).toEqual(['ticket.closed']);
    expect(await kinds({ kind: 'ticket_reopen', target_id: '1003' })).toEqual(['ticket.reopened']);
    // The sandbox ISV lacks psa.company.events on beta: the change is made, its event is not shown.
    expect(await kinds({ kind: 'company_renamed' })).toEqual([]);
  });

  it('refuses what cannot be done, with a clear error and no change', async () => {
    const open = await simulate({ kind: 'ticket_reopen', target_id: '30104' });
    expect(open.status).toBe(422);
    expect(open.body.code).toBe('request_invalid');
    const unknown = await simulate({ kind: 'ticket_close', target_id: '999999' });
    expect(unknown.status).toBe(422);
    const badKind = await simulate({ kind: 'ticket_vanish' });
    expect(badKind.status).toBe(422);
    const wrongField = await simulate({ kind: 'ticket_close', name: 'Not for tickets' });
    expect(wrongField.status).toBe(422);
    const invisible = await simulate({ kind: 'ticket_status' }, randomUUID());
    expect(invisible.status).toBe(404);
    // The beta MSP key does not see alpha.
    expect((await simulate({ kind: 'ticket_status' }, svc.alphaId, svc.betaMspKey)).status).toBe(404);
  });

  it('refuses a production tenant', async () => {
    await svc.services.ds.getRepository(Tenant).update({ id: svc.betaId }, { sandbox: false });
    svc.services.access.invalidate();
    try {
      const res = await simulate({ kind: 'ticket_status' }, svc.betaId);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('request_invalid');
    } finally {
      await svc.services.ds.getRepository(Tenant).update({ id: svc.betaId }, { sandbox: true });
      svc.services.access.invalidate();
    }
  });
});
