/**
 * Load generator, run as a child process so it does not share the service's event loop:
 * N concurrent keep-alive clients walk pages of a list for a fixed time, then print one JSON line.
 * argv: url-prefix, header-json, concurrency, seconds, cursor-field ("next_cursor" or "last_id"), cursor-param
 */
import http from 'node:http';

const [base, headerJson, concurrencyArg, secondsArg, cursorField, cursorParam] = process.argv.slice(2);
const headers = JSON.parse(headerJson) as Record<string, string>;
const concurrency = Number(concurrencyArg);
const deadline = Date.now() + Number(secondsArg) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const latencies: number[] = [];
let errors = 0;
let bytes = 0;

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

async function client(): Promise<void> {
  let cursor: string | null = null;
  while (Date.now() < deadline) {
    const url: string = cursor ? `${base}&${cursorParam}=${encodeURIComponent(cursor)}` : base;
    const t0 = process.hrtime.bigint();
    try {
      const res = await get(url);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      bytes += Buffer.byteLength(res.body);
      if (res.status !== 200) { errors++; cursor = null; continue; }
      // The cursor is a top-level field: find it without parsing the whole page, so the generator's own
      // CPU (it shares the machine) does not grow with the page size.
      const at = res.body.lastIndexOf(`"${cursorField}":`);
      const m = at >= 0 ? /^"([^"]*)"/.exec(res.body.slice(at + cursorField.length + 3)) : null;
      cursor = m ? m[1] : null;
    } catch {
      errors++;
    }
  }
}

(async () => {
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  process.stdout.write(JSON.stringify({ requests: latencies.length, errors, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99), avgBytes: latencies.length ? bytes / latencies.length : 0 }) + '\n');
  agent.destroy();
})();
