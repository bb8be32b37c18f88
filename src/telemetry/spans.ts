/**
 * The few manual spans of the service (request, operation, job, vendor call, webhook try) start here.
 * With no tracer provider registered (OTEL_EXPORTER_OTLP_ENDPOINT unset) every call below is the API's
 * no-op. Attributes are chosen at each site, never copied wholesale from a request: names, ids, methods,
 * statuses and route templates only, no secret, no query string and no vendor payload.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { withScope, type TraceScope } from './scope';

export const TRACER_NAME = 'msp-integration-service';

/** Asked at each use: a provider registered (or shut down) later is the one that records. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The context the span starts in (its parent); the active one by default. */
  parent?: Context;
}

/** What a thrown error is called on its span: its code when it has one (a ServiceError), else its class. */
export function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[a-z_]{1,60}$/.test(code)) return code;
  return err instanceof Error ? err.name : 'error';
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles. A throw marks the span as failed by
 * the error's type only: messages may quote a vendor's answer.
 */
export function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.setAttribute('error.type', errorType(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span that starts a trace of its own whatever context it is called in (a scheduled sync check). */
export function inRootSpan<T>(name: string, scope: TraceScope, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return inSpan(name, { parent: withScope(ROOT_CONTEXT, scope), attributes }, fn);
}
