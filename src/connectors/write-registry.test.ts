import { ServiceError } from '../errors/service-error';
import { WRITE_CONNECTORS, writeConnector } from './write-registry';

describe('write registry', () => {
  it('has a writer for each PSA connector, under its own name', () => {
    for (const name of ['connectwise', 'autotask', 'halopsa'] as const) expect(writeConnector(name).name).toBe(name);
    expect(Object.keys(WRITE_CONNECTORS).sort()).toEqual(['autotask', 'connectwise', 'halopsa']);
  });

  it('answers not_supported for connectors that do not write tickets', () => {
    for (const name of ['ninjaone', 'pax8'] as const) {
      let err: unknown;
      try { writeConnector(name); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('not_supported');
    }
  });
});
