/**
 * The simulators' state across a graceful restart (kit.ts, InstanceState; docs/architecture.md, Sandbox):
 * what one simulator exports, stored as JSON, is what a new simulator continues from: the same records,
 * ids issued after the old ones (removed ones included), later change stamps, and each vendor's own
 * counters. A snapshot that is malformed or names a simulator this process lacks imports nothing.
 */
import { loadVendorFixtures } from '../sandbox/fixtures';
import { createSandboxSimulators } from '.';
import { exportSnapshot, importSnapshot, parseSnapshot, SnapshotInvalid, type VendorSimulator } from './kit';
import { createAutotaskSimulator } from './autotask/simulator';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from './autotask/demo-fixtures';
import type { ConnectWiseSimulator } from './connectwise/simulator';
import type { HaloPsaSimulator } from './halopsa/simulator';
import type { NinjaOneSimulator } from './ninjaone/simulator';
import type { DattoRmmSimulator } from './dattormm/simulator';
import type { Pax8Simulator } from './pax8/simulator';
import type { KaseyaBmsSimulator } from './kaseyabms/simulator';

/** What a graceful close stores and the next start reads: JSON, as the jsonb column keeps it. */
function restart(from: VendorSimulator, to: VendorSimulator, instance: string): void {
  const stored = JSON.parse(JSON.stringify(exportSnapshot({ [from.vendor]: from }, instance, [from.vendor])));
  importSnapshot({ [to.vendor]: to }, instance, parseSnapshot(stored));
}
const exported = (sim: VendorSimulator, instance: string) => JSON.parse(JSON.stringify(sim.exportState(instance)));

function sandboxPair(connector: string, tenant: string) {
  const before = createSandboxSimulators('control')[connector];
  const after = createSandboxSimulators('control')[connector];
  const fixtures = loadVendorFixtures(tenant, connector).resources;
  before.seed(tenant, fixtures);
  after.seed(tenant, fixtures);
  return { before, after };
}

describe('a simulator restored from its exported state', () => {
  it('ConnectWise: the committed and changed tickets stay, and a new ticket gets an id above every earlier one, a removed one included', () => {
    const { before, after } = sandboxPair('connectwise', 'sandbox-alpha') as { before: ConnectWiseSimulator; after: ConnectWiseSimulator };
    const company = { id: before.list('sandbox-alpha', 'companies')[0].id };
    const kept = before.create('sandbox-alpha', 'tickets', { summary: 'Kept', company });
    const removed = before.create('sandbox-alpha', 'tickets', { summary: 'Removed', company });
    before.remove('sandbox-alpha', 'tickets', removed.id);
    before.addNote('sandbox-alpha', kept.id, 'A note before the restart');
    const closed = before.simulate!('sandbox-alpha', { kind: 'ticket_close', target_id: String(kept.id) });

    restart(before, after, 'sandbox-alpha');
    expect(exported(after, 'sandbox-alpha')).toEqual(exported(before, 'sandbox-alpha'));
    expect(after.get('sandbox-alpha', 'tickets', kept.id)).toEqual(before.get('sandbox-alpha', 'tickets', kept.id));
    expect(after.get('sandbox-alpha', 'tickets', Number(closed.target_id))!.closedFlag).toBe(true);
    expect(after.get('sandbox-alpha', 'tickets', removed.id)).toBeUndefined();
    const next = after.create('sandbox-alpha', 'tickets', { summary: 'After', company });
    expect(next.id).toBe(removed.id + 1);
  });

  it('HaloPSA: tickets and actions stay, and the next ticket continues the shared ticket/project sequence', () => {
    const { before, after } = sandboxPair('halopsa', 'sandbox-beta') as { before: HaloPsaSimulator; after: HaloPsaSimulator };
    const client = before.list('sandbox-beta', 'clients')[0];
    const ticket = before.create('sandbox-beta', 'tickets', { summary: 'Kept', client_id: client.id });
    before.addAction('sandbox-beta', ticket.id, 'Before the restart');
    before.simulate!('sandbox-beta', { kind: 'ticket_status', target_id: String(ticket.id) });

    restart(before, after, 'sandbox-beta');
    expect(exported(after, 'sandbox-beta')).toEqual(exported(before, 'sandbox-beta'));
    expect(after.get('sandbox-beta', 'tickets', ticket.id)).toEqual(before.get('sandbox-beta', 'tickets', ticket.id));
    const next = after.create('sandbox-beta', 'tickets', { summary: 'After', client_id: client.id });
    expect(next.id).toBe(ticket.id + 1);
  });

  it('Kaseya BMS: tickets, notes and changes stay, and the next note continues the note ids', () => {
    const { before, after } = sandboxPair('kaseyabms', 'sandbox-gamma') as { before: KaseyaBmsSimulator; after: KaseyaBmsSimulator };
    const ticket = before.list('sandbox-gamma', 'tickets')[0];
    const note = before.addNote('sandbox-gamma', ticket.Id, 'Before the restart');
    const closed = before.simulate!('sandbox-gamma', { kind: 'ticket_close', target_id: String(ticket.Id) });

    restart(before, after, 'sandbox-gamma');
    expect(exported(after, 'sandbox-gamma')).toEqual(exported(before, 'sandbox-gamma'));
    expect(after.get('sandbox-gamma', 'tickets', Number(closed.target_id))!.CompletedDate).not.toBeNull();
    expect(after.addNote('sandbox-gamma', ticket.Id, 'After').Id).toBe(note.Id + 1);
  });

  it('NinjaOne: devices, alerts and the activity log stay; a removed device id is not issued again', () => {
    const { before, after } = sandboxPair('ninjaone', 'sandbox-alpha') as { before: NinjaOneSimulator; after: NinjaOneSimulator };
    const device = before.create('sandbox-alpha', 'devices', { systemName: 'BEFORE-RESTART' });
    before.remove('sandbox-alpha', 'devices', device.id);
    const offline = before.simulate!('sandbox-alpha', { kind: 'device_offline' });
    const alert = before.raiseAlert('sandbox-alpha', Number(offline.target_id), 'Disk full');

    restart(before, after, 'sandbox-alpha');
    expect(exported(after, 'sandbox-alpha')).toEqual(exported(before, 'sandbox-alpha'));
    expect(after.get('sandbox-alpha', 'devices', Number(offline.target_id))!.offline).toBe(true);
    expect(after.get('sandbox-alpha', 'alerts', alert.uid)).toEqual(alert);
    expect(after.create('sandbox-alpha', 'devices', { systemName: 'AFTER' }).id).toBe(device.id + 1);
  });

  it('Datto RMM: devices, alerts and the account keep their identity', () => {
    const { before, after } = sandboxPair('dattormm', 'sandbox-beta') as { before: DattoRmmSimulator; after: DattoRmmSimulator };
    const offline = before.simulate!('sandbox-beta', { kind: 'device_offline' });
    const alert = before.raiseAlert('sandbox-beta', offline.target_id, 'Offline since the restart test');

    restart(before, after, 'sandbox-beta');
    expect(exported(after, 'sandbox-beta')).toEqual(exported(before, 'sandbox-beta'));
    expect(after.list('sandbox-beta', 'devices').find((d) => d.uid === offline.target_id)!.online).toBe(false);
    expect(after.list('sandbox-beta', 'alerts').find((a) => a.alertUid === alert.alertUid)).toEqual(alert);
  });

  it('Pax8: a company created with its contact stays under the same id', () => {
    const { before, after } = sandboxPair('pax8', 'sandbox-alpha') as { before: Pax8Simulator; after: Pax8Simulator };
    const company = before.list('sandbox-alpha', 'companies')[0];
    const contact = before.create('sandbox-alpha', 'contacts', {
      companyId: company.id, firstName: 'Ada', lastName: 'Restart', email: 'ada@example.com', phone: '555-0100', types: [{ type: 'Admin', primary: false }],
    });

    restart(before, after, 'sandbox-alpha');
    expect(exported(after, 'sandbox-alpha')).toEqual(exported(before, 'sandbox-alpha'));
    expect(after.get('sandbox-alpha', 'contacts', contact.id)).toEqual(contact);
    expect(after.companyOfContact('sandbox-alpha', contact.id)).toBe(company.id);
  });

  it('Autotask: field information and ticket numbers continue, and a change is stamped later than every earlier one', () => {
    // A fixed vendor day: ticket numbers carry the date, and every stamp would repeat without the restored clock.
    const day = Date.UTC(2026, 2, 4, 12);
    const before = createAutotaskSimulator({ now: () => day });
    const after = createAutotaskSimulator({ now: () => day });
    const fixtures = loadAutotaskDemoFixtures().resources;
    before.seed(AUTOTASK_DEMO_INSTANCE, fixtures);
    after.seed(AUTOTASK_DEMO_INSTANCE, {});
    const companyID = before.list(AUTOTASK_DEMO_INSTANCE, 'Companies')[0].id;
    const first = before.create(AUTOTASK_DEMO_INSTANCE, 'Tickets', { title: 'Before', companyID, status: 1 });
    const changed = before.update(AUTOTASK_DEMO_INSTANCE, 'Tickets', first.id as number, { title: 'Changed before' });

    restart(before, after, AUTOTASK_DEMO_INSTANCE);
    expect(exported(after, AUTOTASK_DEMO_INSTANCE)).toEqual(exported(before, AUTOTASK_DEMO_INSTANCE));
    expect(after.fields(AUTOTASK_DEMO_INSTANCE, 'Tickets')).toEqual(before.fields(AUTOTASK_DEMO_INSTANCE, 'Tickets'));
    const second = after.create(AUTOTASK_DEMO_INSTANCE, 'Tickets', { title: 'After', companyID, status: 1 });
    expect(second.id).toBe((first.id as number) + 1);
    expect(second.ticketNumber).toBe(String(first.ticketNumber).replace(/\.(\d+)$/, (_, n: string) => `.${String(Number(n) + 1).padStart(4, '0')}`));
    const later = after.update(AUTOTASK_DEMO_INSTANCE, 'Tickets', first.id as number, { title: 'Changed after' });
    expect(Date.parse(String(later.lastActivityDate))).toBeGreaterThan(Date.parse(String(changed.lastActivityDate)));
  });
});

describe('a snapshot that cannot be restored', () => {
  it('is refused before anything is imported, with a message that quotes none of it', () => {
    const sims = createSandboxSimulators('control');
    sims.connectwise.seed('sandbox-alpha', loadVendorFixtures('sandbox-alpha', 'connectwise').resources);
    const good = exportSnapshot(sims, 'sandbox-alpha', ['connectwise']);
    const fixturesOnly = sims.connectwise.exportState('sandbox-alpha');

    expect(() => parseSnapshot('{"version": 1, "connectors": {"connectwise": "secret-value')).toThrow(new SnapshotInvalid('not JSON'));
    expect(() => parseSnapshot({ version: 2, connectors: {} })).toThrow(SnapshotInvalid);
    expect(() => parseSnapshot({ version: 1, connectors: { connectwise: { ...good.connectors.connectwise, issued: { tickets: 'x' } } } }))
      .toThrow(new SnapshotInvalid('the connectwise state is malformed'));

    const other = createSandboxSimulators('control');
    other.connectwise.seed('sandbox-alpha', {});
    const withUnknown = parseSnapshot({ version: 1, connectors: { ...good.connectors, 'not-a-vendor': good.connectors.connectwise } });
    expect(() => importSnapshot(other, 'sandbox-alpha', withUnknown)).toThrow(new SnapshotInvalid('no simulator for not-a-vendor'));
    expect(other.connectwise.exportState('sandbox-alpha')!.records).toEqual({});
    expect(fixturesOnly!.records.tickets!.length).toBeGreaterThan(0);
  });
});
