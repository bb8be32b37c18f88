/**
 * The bench's webhook receiver, in a process of its own as an ISV's receiver is a system of its own: its
 * HTTP parsing then does not take the event loop of the service it measures. It notes when each
 * delivery arrived (by its `webhook-id`, with its own clock: the machine's, as the events' `created_at`)
 * and answers 204; what it noted reaches this process every 20 ms, so a late batch delays only when the
 * bench sees a delivery, never the time it records.
 */
import { spawn } from 'node:child_process';

const RECEIVER = `
const http = require('node:http');
let batch = [];
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { batch.push([String(req.headers['webhook-id']), Date.now()]); res.writeHead(204).end(); });
});
setInterval(() => { if (batch.length) { process.send(batch); batch = []; } }, 20);
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
`;

export interface BenchReceiver {
  url: string;
  /** Delivery id -> when it arrived (ms since the epoch). */
  received: Map<string, number>;
  close(): void;
}

export function startReceiver(): Promise<BenchReceiver> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const received = new Map<string, number>();
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bench's webhook receiver exited (${code})`)));
    child.on('message', (m: { port: number } | [string, number][]) => {
      if (Array.isArray(m)) for (const [id, at] of m) received.set(id, at);
      else resolve({ url: `http://127.0.0.1:${m.port}/hook`, received, close: () => { child.removeAllListeners('exit'); child.kill(); } });
    });
  });
}
