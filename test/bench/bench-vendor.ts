/**
 * The bench tenant's ConnectWise (test/bench/run.ts), in a process of its own as a vendor is a system of
 * its own: serving 50,000 tickets a page at a time (serializing each page, filtering, paging) is then not
 * done on the event loop of the service whose sync it measures, as the fleet's vendors (fleet-vendors.ts)
 * and the webhook receiver (receiver.ts) are not. Its instance is seeded with the sandbox's ConnectWise
 * fixtures and grown to the bench's ticket count.
 *
 * Asked over IPC: `{ op: 'list' }` answers the tickets' ids and summaries; `{ op: 'update', updates }`
 * edits tickets as the vendor's UI would (each edit moves the ticket's lastUpdated) and answers when done.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { createConnectWiseSimulator } from '../../src/simulators/connectwise/simulator';

export const BENCH_INSTANCE = 'bench';

type Ask = { op: 'list' } | { op: 'update'; updates: [number, Record<string, unknown>][] };
type Request = Ask & { id: number };

export interface BenchVendor {
  /** The ConnectWise API's base URL (a connection's baseUrl). */
  baseUrl: string;
  tickets(): Promise<{ id: number; summary: string }[]>;
  update(updates: [number, Record<string, unknown>][]): Promise<void>;
  close(): void;
}

export function startBenchVendor(tickets: number): Promise<BenchVendor> {
  const child = fork(__filename, [], { env: { ...process.env, BENCH_VENDOR_TICKETS: String(tickets) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, { resolve: (answer: unknown) => void; reject: (err: Error) => void }>();
  let next = 0;
  let exited: Error | null = null;
  const ask = <T>(req: Ask) => new Promise<T>((resolve, reject) => {
    if (exited) { reject(exited); return; }
    const id = ++next;
    waiting.set(id, { resolve: resolve as (a: unknown) => void, reject });
    child.send({ ...req, id });
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      // Whatever was asked of it is answered with the failure, not left waiting.
      exited = new Error(`the bench's vendor exited (${code})`);
      for (const w of waiting.values()) w.reject(exited);
      waiting.clear();
      reject(exited);
    });
    child.on('message', (m: { port: number } | { id: number; answer: unknown }) => {
      if ('port' in m) {
        resolve({
          baseUrl: `http://127.0.0.1:${m.port}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
          tickets: () => ask({ op: 'list' }),
          update: (updates) => ask({ op: 'update', updates }),
          close: () => { child.kill(); },
        });
      } else {
        waiting.get(m.id)?.resolve(m.answer);
        waiting.delete(m.id);
      }
    });
  });
}

function main(): void {
  const cw = createConnectWiseSimulator({ controlToken: 'bench-control' });
  const fixtures = loadVendorFixtures('sandbox-alpha', 'connectwise');
  cw.seed(BENCH_INSTANCE, { ...fixtures.resources, tickets: [] });
  cw.grow(BENCH_INSTANCE, 'tickets', Number(process.env.BENCH_VENDOR_TICKETS));
  const app = express();
  app.use(`/sandbox-vendors/${cw.vendor}`, cw.router);
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  process.on('message', (req: Request) => {
    if (req.op === 'list') {
      const answer = (cw.list(BENCH_INSTANCE, 'tickets') as { id: number; summary: string }[]).map((t) => ({ id: t.id, summary: t.summary }));
      process.send!({ id: req.id, answer });
    } else {
      for (const [id, patch] of req.updates) cw.update(BENCH_INSTANCE, 'tickets', id, patch);
      process.send!({ id: req.id, answer: null });
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
}

if (require.main === module) main();
