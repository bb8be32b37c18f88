/**
 * The one HTTP helper every writer sends its calls through (docs/architecture.md, Connectors). What differs
 * per vendor is data its client declares once, a `VendorDialect`: its vendor profile (auth, token rule and
 * throttling signals: vendor-session.ts) and how its refusal of a request's content reads. The rest is the
 * same for every vendor: the URL under the connection's base, reads retried (vendor-http.ts), and a refusal
 * turned into field problems named after our request (VendorValidationError, 422 `validation`), while
 * throttling and outages stay VendorHttpError.
 *
 * A write is resent in two cases only, both answers the vendor gives before it acts, so the write still
 * lands once: a 401 to a token (vendor-session.ts renews the token and resends once; authentication comes
 * before any processing), and a 429 where the profile declares that the vendor's 429 refuses before any
 * processing (`resendThrottledWrites`, Pax8; within the read retries' limits). Anything else (a 503, a
 * timeout, no answer) is not resent here: the vendor.write job decides, after looking for the write's
 * marker at the vendor (the writer's reconcile), and never sends after its fence's deadline.
 */
import type { ConnectorName } from '../../entities/tenancy';
import { VendorHttpError } from './vendor-http';
import { vendorSession, type VendorProfile } from './vendor-session';
import { VendorValidationError, type FieldMap } from './vendor-errors';
import type { FieldProblem, VendorRequestPreview, WriteContext } from './write-types';

/** One call a writer makes; `path` is relative to the connection's base URL. */
export interface WriterRequest {
  method: VendorRequestPreview['method'];
  path: string;
  body?: unknown;
  query?: Record<string, string | number | boolean>;
  /** Safe to repeat (a read, Autotask's POST <Entity>/query included); default: GET only. */
  read?: boolean;
}

/** How a vendor is spoken to by its writers, declared once beside its client. */
export interface VendorDialect {
  connector: ConnectorName;
  /** How the vendor is spoken to: auth, token rule, throttling signals (the connector's one profile). */
  profile: VendorProfile;
  /** The statuses with which the vendor refuses a request's content (a call may name its own). */
  refusedStatuses: readonly number[];
  /** The vendor's refusal body as problems (vendor field names mapped through `fields`, else `fallback`); [] when it is not one. */
  problems(body: unknown, fields: FieldMap, fallback: string): FieldProblem[];
}

export type WriterCall = <T>(ctx: WriteContext, req: WriterRequest, fields: FieldMap, fallback: string) => Promise<T>;

/**
 * The vendor's refusal of a request's content as a VendorValidationError, or `err` unchanged (throttling,
 * outages, a status that is not a refusal, a body that names no problem).
 */
export function refusal(d: VendorDialect, err: unknown, fields: FieldMap, fallback: string, statuses = d.refusedStatuses): unknown {
  if (!(err instanceof VendorHttpError) || !statuses.includes(err.status)) return err;
  const problems = d.problems(err.body, fields, fallback);
  return problems.length ? new VendorValidationError(d.connector, problems, err.status, err.body) : err;
}

/** The call function of a vendor's writers; `statuses`: the refusals of these calls, when they differ from the vendor's usual. */
export function writerCall(d: VendorDialect, statuses = d.refusedStatuses): WriterCall {
  return async <T>(ctx: WriteContext, req: WriterRequest, fields: FieldMap, fallback: string): Promise<T> => {
    try {
      return await vendorSession(d.profile, ctx).send<T>({ method: req.method, path: req.path, query: req.query, json: req.body, read: req.read });
    } catch (err) {
      throw refusal(d, err, fields, fallback, statuses);
    }
  };
}

/** A message the vendor sent as the body itself or as its `message`, or `fallback`. */
export function messageOf(body: unknown, fallback: string): string {
  if (typeof body === 'string' && body.trim()) return body;
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message : fallback;
}
