import { ServiceError } from '../errors/service-error';
import { capabilitiesOf, CONNECTOR_NAMES, connectorModule, lookupWrite, readConnector, recordUrl, vendorWrite } from './registry';
import { WRITE_CAPABILITY, WRITE_NAMES } from './vendor-writes';

describe('connector registry', () => {
  it('answers each write where the connector declares its capability, and registers exactly the writes it declares', () => {
    for (const name of CONNECTOR_NAMES) {
      const declared = capabilitiesOf(name).writes;
      const registered = Object.keys(connectorModule(name).writes) as (keyof typeof WRITE_CAPABILITY)[];
      // Nothing registered that the capabilities do not declare, nothing declared without its writes.
      for (const w of registered) expect([name, w, declared.includes(WRITE_CAPABILITY[w])]).toEqual([name, w, true]);
      for (const w of WRITE_NAMES.filter((x) => declared.includes(WRITE_CAPABILITY[x]))) {
        expect([name, w, registered.includes(w)]).toEqual([name, w, true]);
        expect(vendorWrite(name, w)).toBe(connectorModule(name).writes[w]);
      }
    }
    expect(CONNECTOR_NAMES.filter((n) => !('refused' in lookupWrite(n, 'ticket.create'))).sort()).toEqual(['autotask', 'connectwise', 'halopsa', 'kaseyabms']);
    expect(CONNECTOR_NAMES.filter((n) => !('refused' in lookupWrite(n, 'device.deploy')))).toEqual(['ninjaone', 'dattormm']);
    expect(CONNECTOR_NAMES.filter((n) => !('refused' in lookupWrite(n, 'agreement.line.add'))).sort()).toEqual(['autotask', 'connectwise', 'halopsa', 'kaseyabms']);
    expect(CONNECTOR_NAMES.filter((n) => !('refused' in lookupWrite(n, 'company.create')))).toEqual(['pax8']);
  });

  it('refuses a write a connector does not declare: typed, and 501 not_supported when thrown', () => {
    expect(lookupWrite('pax8', 'ticket.create')).toMatchObject({ refused: 'not_supported', connector: 'pax8', write: 'ticket.create', capability: 'ticket.create' });
    expect(lookupWrite('ninjaone', 'agreement.line.end')).toMatchObject({ refused: 'not_supported', capability: 'agreement.write' });
    for (const name of CONNECTOR_NAMES.filter((n) => !capabilitiesOf(n).writes.includes('ticket.create'))) {
      let err: unknown;
      try { vendorWrite(name, 'ticket.create'); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('not_supported');
    }
  });

  it('declares exactly one limited (fixture-only) PSA connector, with no boards, statuses, priorities or members', () => {
    const limited = CONNECTOR_NAMES.filter((n) => capabilitiesOf(n).commits === 'fixture_only');
    expect(limited).toEqual(['halopsa']);
    for (const r of ['boards', 'statuses', 'priorities', 'members'] as const) expect(readConnector(limited[0]).resources).not.toContain(r);
  });

  it('each read connector is registered under its own name', () => {
    for (const n of CONNECTOR_NAMES) expect(readConnector(n).name).toBe(n);
  });
});

describe('record links each connector declares', () => {
  it('point at the vendor UI host of the connection', () => {
    expect(recordUrl('connectwise', 'https://api-na.myconnectwise.net/v4_6_release/apis/3.0', 'ticket', '123'))
      .toBe('https://na.myconnectwise.net/v4_6_release/services/system_io/router/openrecord.rails?locale=en_US&recordType=ServiceFV&recid=123');
    expect(recordUrl('connectwise', 'https://api-na.myconnectwise.net/v4_6_release/apis/3.0', 'company', '7')).toContain('recordType=CompanyFV&recid=7');
    expect(recordUrl('halopsa', 'https://acme.halopsa.com', 'ticket', '1001')).toBe('https://acme.halopsa.com/ticket?id=1001');
    expect(recordUrl('ninjaone', 'https://eu.ninjarmm.com', 'device', '42')).toBe('https://eu.ninjarmm.com/#/deviceDashboard/42/overview');
    expect(recordUrl('pax8', 'https://api.pax8.com/v1', 'company', 'x')).toBeNull();
    expect(recordUrl('dattormm', 'https://syrah-api.centrastage.net/api', 'device', 'a-uid')).toBeNull();
    expect(recordUrl('connectwise', 'not a url', 'ticket', '1')).toBeNull();
  });
});
