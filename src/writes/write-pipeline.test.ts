/** How a vendor write that did not land reaches the caller (failure mapping), for every failure kind. */
import { ServiceError } from '../errors/service-error';
import { failureToError } from './write-pipeline';
import type { VendorWriteFailure } from './vendor-write';

const failure = (over: Partial<VendorWriteFailure>): VendorWriteFailure => ({
  ok: false, kind: 'refused', status: 400, retryAfterSeconds: null, problems: [], message: 'vendor answered', ...over,
});

describe('failure mapping', () => {
  it('a throttled write is 429 rate_limited with the vendor Retry-After, never a success', () => {
    const e = failureToError('connectwise', failure({ kind: 'throttled', status: 429, retryAfterSeconds: 300 }));
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ code: 'rate_limited', status: 429, extras: { retryAfterSeconds: 300, details: { vendor_status: 429 } } });
  });

  it('a throttled write without Retry-After still tells the caller when to come back', () => {
    expect(failureToError('autotask', failure({ kind: 'throttled', status: 429 })).extras.retryAfterSeconds).toBe(30);
  });

  it('an unavailable vendor is 503 vendor_unavailable', () => {
    expect(failureToError('halopsa', failure({ kind: 'unavailable', status: 503, retryAfterSeconds: 5 }))).toMatchObject({ code: 'vendor_unavailable', status: 503, extras: { retryAfterSeconds: 5 } });
  });

  it("a vendor field rule is 422 validation naming the vendor's fields", () => {
    const e = failureToError('connectwise', failure({ kind: 'validation', status: 400, problems: [{ field: 'summary', message: 'too long' }, { field: 'board', message: 'unknown' }] }));
    expect(e).toMatchObject({ code: 'validation', status: 422, message: 'summary: too long' });
    expect(e.extras.details).toEqual({ connector: 'connectwise', field: 'summary', problems: [{ field: 'summary', message: 'too long' }, { field: 'board', message: 'unknown' }] });
  });

  it('a validation failure without field problems names the body', () => {
    expect(failureToError('autotask', failure({ kind: 'validation', message: 'bad' })).extras.details).toMatchObject({ field: 'body' });
  });

  it('a write the connector does not make (the registry\'s typed refusal) is 501 not_supported', () => {
    expect(failureToError('pax8', failure({ kind: 'not_supported', status: 501, message: 'The pax8 connector does not make the ticket.create write.' })))
      .toMatchObject({ code: 'not_supported', status: 501, message: 'The pax8 connector does not make the ticket.create write.' });
  });

  it('any other definite refusal is 502 vendor_error with the vendor status', () => {
    expect(failureToError('pax8', failure({ kind: 'refused', status: 409 }))).toMatchObject({ code: 'vendor_error', status: 502, extras: { details: { vendor_status: 409 } } });
  });

  it('an unknown outcome, or an untyped failure, is 503 with Retry-After, never a refusal', () => {
    expect(failureToError('connectwise', failure({ kind: 'unknown', status: 502, retryAfterSeconds: 7 }))).toMatchObject({
      code: 'vendor_unavailable', status: 503, extras: { retryAfterSeconds: 7, details: { vendor_status: 502, outcome: 'unknown' } },
    });
    expect(failureToError('pax8', null)).toMatchObject({ code: 'vendor_unavailable', status: 503, extras: { details: { outcome: 'unknown' } } });
  });
});
