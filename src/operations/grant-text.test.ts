import { Grant } from '../access/caller';
import { grantText } from './grant-text';
import { derivedGrant } from './operation';

describe('the grant sentence of the reference', () => {
  it('states keys, needs and a derived rule from their data', () => {
    expect(grantText(undefined)).toBeUndefined();
    expect(grantText(Grant.TicketCreate)).toBe('Grant `psa.ticket.create`.');
    expect(grantText({ key: Grant.TicketCreate, kind: 'psa' })).toBe('Grant `psa.ticket.create` on the PSA.');
    expect(grantText({ key: [Grant.TicketEvents, Grant.DeviceEvents] })).toBe('Any one of the grants `psa.ticket.events`, `rmm.device.events`.');
    expect(grantText('none')).toMatch(/^Grant: none/);
    const rule = derivedGrant([{ key: Grant.TicketCreate, kind: 'psa', when: 'a ticket is asked' }], async () => ({ key: Grant.TicketCreate, kind: 'psa' as const }));
    expect(grantText(rule)).toBe('Grant by target: `psa.ticket.create` on the PSA when a ticket is asked.');
  });

  it('a derived rule that answers a grant its cases do not name fails, so the reference cannot drift from it', async () => {
    const rule = derivedGrant([{ key: Grant.TicketCreate, when: 'always' }], () => ({ key: Grant.ProjectWrite }));
    await expect(Promise.resolve(rule({ path: {}, query: {}, body: {} }, {} as never))).rejects.toThrow(/none of its declared cases/);
    const kept = derivedGrant([{ key: Grant.TicketCreate, when: 'always' }], () => null);
    await expect(Promise.resolve(kept({ path: {}, query: {}, body: {} }, {} as never))).resolves.toBeNull();
  });
});
