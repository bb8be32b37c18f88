/**
 * Dependencies a test can take away and give back (docs/architecture.md, Faults an operator will meet),
 * without touching the shared servers: a redis-server of the test's own on a free loopback port, killed
 * and started again, and a TCP proxy in front of the shared PostgreSQL whose links the test cuts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** A redis-server of the test's own (no persistence): `stop` kills it, `start` runs a fresh one on the same port. */
export class OwnRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child && this.child.exitCode == null) return;
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await accepts(this.port)); i++) await new Promise((r) => setTimeout(r, 50));
    if (!(await accepts(this.port))) throw new Error(`redis-server did not start on ${this.port}`);
  }

  /** Kills it at once (no shutdown save), as a crashed or unreachable Redis. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode != null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}

/** A TCP proxy to 127.0.0.1:`targetPort` on a port of its own; `cut` drops every link and refuses new ones until `restore`. */
export class CuttableProxy {
  private server: net.Server | null = null;
  private readonly links = new Set<net.Socket>();
  port = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        this.links.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => { this.links.delete(a); b.destroy(); });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(this.port, '127.0.0.1', () => resolve()); });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise((r) => server.close(r)) : Promise.resolve();
    for (const s of this.links) s.destroy();
    await closed;
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.start();
  }
}
