/**
 * OpenTelemetry traces (docs/architecture.md, Operations), on only when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * a tracer provider exporting over OTLP/HTTP (JSON) in batches, with the AsyncLocalStorage context manager
 * (nested spans find their parent across awaits) and the W3C propagator (a job carries its trace in its
 * payload, src/telemetry/job-spans.ts). Unset, nothing is registered and every span is the API's no-op.
 *
 * One provider per process: a process running several services (tests) shares it, and the last service to
 * close shuts it down, which flushes what is still batched.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { ScopeSpanProcessor } from './scope';

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; traces go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
}

export interface Tracing {
  /** Flushes the spans still batched and, for the process's last user, unregisters the provider. */
  shutdown(): Promise<void>;
}

/** The signal path is appended to the base endpoint, as the OTLP exporter specification says. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

let shared: { provider: NodeTracerProvider; users: number } | null = null;

/** Starts exporting, or returns null when tracing is off (no endpoint). */
export function startTracing(config: TracingConfig | null): Tracing | null {
  if (!config) return null;
  if (!shared) {
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
      spanProcessors: [
        new ScopeSpanProcessor(),
        new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(config.endpoint) }), { scheduledDelayMillis: 1000 }),
      ],
    });
    provider.register();
    shared = { provider, users: 0 };
  }
  const mine = shared;
  mine.users++;
  let done: Promise<void> | undefined;
  return {
    shutdown: () => (done ??= (async () => {
      mine.users--;
      if (mine.users > 0) {
        await mine.provider.forceFlush();
        return;
      }
      if (shared === mine) shared = null;
      await mine.provider.shutdown();
      // Registered globals go too, so a later start in this process registers its own.
      trace.disable();
      context.disable();
      propagation.disable();
    })()),
  };
}
