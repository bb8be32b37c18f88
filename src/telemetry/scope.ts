/**
 * What every span of a trace says about whom it serves: the request id (the one pino-http assigns and
 * answers in `X-Request-Id`) and the tenant. They ride in the OpenTelemetry context, set once where they
 * become known (the request, the operation, a job's payload), and one span processor copies them onto
 * every span started under them, so no span site has to remember them (docs/architecture.md, Operations).
 */
import { createContextKey, type Context } from '@opentelemetry/api';
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export const ATTR_REQUEST_ID = 'msp.request_id';
export const ATTR_TENANT_ID = 'msp.tenant_id';

const REQUEST_ID = createContextKey('msp.request_id');
const TENANT_ID = createContextKey('msp.tenant_id');

export interface TraceScope {
  requestId?: string;
  tenantId?: string;
}

/** `ctx` with the scope's values set (an absent one keeps what `ctx` had). */
export function withScope(ctx: Context, scope: TraceScope): Context {
  let next = ctx;
  if (scope.requestId) next = next.setValue(REQUEST_ID, scope.requestId);
  if (scope.tenantId) next = next.setValue(TENANT_ID, scope.tenantId);
  return next;
}

export function scopeOf(ctx: Context): TraceScope {
  const requestId = ctx.getValue(REQUEST_ID);
  const tenantId = ctx.getValue(TENANT_ID);
  return {
    ...(typeof requestId === 'string' ? { requestId } : {}),
    ...(typeof tenantId === 'string' ? { tenantId } : {}),
  };
}

/** Stamps the request id and tenant of the context a span starts in onto the span. */
export class ScopeSpanProcessor implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const { requestId, tenantId } = scopeOf(parentContext);
    if (requestId) span.setAttribute(ATTR_REQUEST_ID, requestId);
    if (tenantId) span.setAttribute(ATTR_TENANT_ID, tenantId);
  }
  onEnd(): void { /* nothing to add once a span ended */ }
  forceFlush(): Promise<void> { return Promise.resolve(); }
  shutdown(): Promise<void> { return Promise.resolve(); }
}
