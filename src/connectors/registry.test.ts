import { ServiceError } from '../errors/service-error';
import { capabilitiesOf, CONNECTOR_NAMES, deviceWriter, readConnector, recordUrl, writeConnector } from './registry';

describe('connector registry', () => {
  it('has a writer for each connector that declares writes, under its own name', () => {
    const writers = CONNECTOR_NAMES.filter((n) => capabilitiesOf(n).writes.includes('ticket.create'));
    for (const name of writers) expect(writeConnector(name).name).toBe(name);
    expect([...writers].sort()).toEqual(['autotask', 'connectwise', 'halopsa']);
    const deployers = CONNECTOR_NAMES.filter((n) => capabilitiesOf(n).writes.includes('device.deploy'));
    for (const name of deployers) expect(deviceWriter(name).name).toBe(name);
    expect(deployers).toEqual(['ninjaone', 'dattormm']);
  });

  it('answers not_supported for connectors that do not write tickets', () => {
    for (const name of CONNECTOR_NAMES.filter((n) => !capabilitiesOf(n).writes.includes('ticket.create'))) {
      let err: unknown;
      try { writeConnector(name); } catch (e) { err = e; }
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
