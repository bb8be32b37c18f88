/**
 * The span of one vendor call (src/connectors/vendor-http.ts), retries included (CLIENT kind): the method,
 * the vendor's host and path, the connector, the status and the attempts it took, and for a failure what
 * it says about a write (`not_sent`, `unknown`, ...). Never the query string (filters, and tokens where a
 * vendor takes them there), the headers (credentials) or either body (vendor payloads).
 */
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { inSpan } from './spans';

/** What a finished or failed call tells its span: VendorResponse and VendorHttpError both have these. */
interface CallEnd {
  status?: unknown;
  attempts?: unknown;
  outcome?: unknown;
}

function endAttributes(end: CallEnd): Attributes {
  const a: Attributes = {};
  if (typeof end.status === 'number' && end.status > 0) a['http.response.status_code'] = end.status;
  if (typeof end.attempts === 'number') a['msp.vendor.attempts'] = end.attempts;
  if (typeof end.outcome === 'string') a['msp.vendor.outcome'] = end.outcome;
  return a;
}

export function inVendorCallSpan<T extends CallEnd>(method: string, url: URL, connector: string | undefined, fn: () => Promise<T>): Promise<T> {
  return inSpan(`vendor ${method}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'server.address': url.hostname,
      'url.path': url.pathname,
      ...(connector ? { 'msp.connector': connector } : {}),
    },
  }, async (span) => {
    try {
      const res = await fn();
      span.setAttributes(endAttributes(res));
      return res;
    } catch (err) {
      span.setAttributes(endAttributes((err ?? {}) as CallEnd));
      throw err;
    }
  });
}
