/**
 * Tracing is on only with an endpoint: without one nothing is registered and spans record nothing; with
 * one, the provider is the process's until its last user shuts it down. What is exported, and where, is
 * test/traces.test.ts's (a collector on loopback).
 */
import { trace } from '@opentelemetry/api';
import { startTracing, tracesUrl } from './tracing';

const recording = () => {
  const span = trace.getTracer('tracing-test').startSpan('probe');
  const on = span.isRecording();
  span.end();
  return on;
};
// Nothing listens there; no span below ends while a provider is registered, so nothing is sent.
const config = { endpoint: 'http://127.0.0.1:9/otlp/', serviceName: 'tracing-test' };

describe('startTracing', () => {
  it('without an endpoint registers nothing', () => {
    expect(startTracing(null)).toBeNull();
    expect(recording()).toBe(false);
  });

  it('with one records until its last user shuts it down', async () => {
    const first = startTracing(config)!;
    const second = startTracing(config)!;
    const open = trace.getTracer('tracing-test').startSpan('open');
    expect(open.isRecording()).toBe(true);
    await first.shutdown();
    expect(trace.getTracer('tracing-test').startSpan('still').isRecording()).toBe(true);
    await second.shutdown();
    expect(recording()).toBe(false);
  });

  it('sends traces to the signal path under the endpoint', () => {
    expect(tracesUrl('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/otlp/')).toBe('http://collector:4318/otlp/v1/traces');
  });
});
