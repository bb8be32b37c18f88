/**
 * Connect: the connect page's time to first byte (GET /connect/<token>, p50 and p99 of 50), and the time
 * from pressing Connect (the POST) to the first complete sync of the new tenant, read from the progress
 * the completion page polls: ConnectWise, NinjaOne (signed in through the simulator's consent page) and
 * Pax8 on the sandbox's simulators (sandbox-alpha's data).
 */
import http from 'node:http';
import type { RunningServer } from '../../src/server';
import { ConnectPageClient, CW_CREDENTIALS, sandboxBase } from '../support/connect-page';

const TTFB_SAMPLES = 50;

function ttfb(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    http.get(url, (res) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      res.resume();
      res.on('end', () => resolve(ms));
    }).on('error', reject);
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

export async function benchConnect(svc: RunningServer): Promise<Record<string, string | number>> {
  const s = svc.services;
  const isv = await s.admin.createIsv('Connect Bench ISV');
  const { key } = await s.admin.issueApiKey(isv.id, 'connect-bench');
  const res = await fetch(`${svc.url}/connect-sessions`, {
    method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ msp_name: 'Connect Bench MSP', kinds: ['psa', 'rmm', 'distributor'], requested_grants: ['psa.ticket.create', 'psa.ticket.events', 'rmm.device.events', 'rmm.device.write'] }),
  });
  const created = await res.json() as { connect_url: string };
  if (res.status !== 201) throw new Error(`connect session: ${res.status} ${JSON.stringify(created)}`);
  const times: number[] = [];
  for (let i = 0; i < TTFB_SAMPLES; i++) times.push(await ttfb(created.connect_url));
  times.sort((a, b) => a - b);

  const page = ConnectPageClient.fromUrl(created.connect_url);
  const base = sandboxBase(svc);
  const secret = { clientId: 'sandbox', clientSecret: 'sandbox-secret' };
  for (const [kind, connector, url, credentials] of [['psa', 'connectwise', base.connectwise, CW_CREDENTIALS], ['rmm', 'ninjaone', base.ninjaone, secret], ['distributor', 'pax8', base.pax8, secret]] as const) {
    const tested = await page.test(kind, connector, url, credentials);
    if (tested.status !== 303) throw new Error(`connect test ${connector}: ${tested.status}`);
  }
  await page.authorize('rmm');
  const t0 = process.hrtime.bigint();
  const done = await page.complete({ psa: ['psa.ticket.create', 'psa.ticket.events'], rmm: ['rmm.device.events', 'rmm.device.write'], distributor: [] });
  if (done.status !== 200) throw new Error(`connect: ${done.status}`);
  const completeMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const progress = await page.awaitFirstSync(ConnectPageClient.progressPath(done.html), 100_000);
  const firstSyncS = Number(process.hrtime.bigint() - t0) / 1e9;
  const records = progress.connections.flatMap((c) => c.resources).reduce((n, r) => n + r.records, 0);
  return {
    'connect page TTFB p50/p99 ms': `${pct(times, 0.5).toFixed(1)} / ${pct(times, 0.99).toFixed(1)}`,
    'connect POST (Connect) answered ms': Math.round(completeMs),
    'connect -> first complete sync s': +firstSyncS.toFixed(2),
    'connect first sync records': records,
  };
}
