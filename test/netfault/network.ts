/**
 * The network-fault harness's network (docs/architecture.md, Testing): one network
 * namespace per "host" (api, worker, postgres, redis) and a router namespace joining them, each host on its
 * own point-to-point veth link (a /30 of a private range that exists only inside these namespaces; no host
 * has a default route and the router has no link to the machine's interfaces, so nothing leaves the machine).
 * The test itself is the client: the root namespace gets one veth to the router.
 *
 * Faults are made on the router, on the traffic between two hosts, with what this kernel offers (it has no
 * `netem` qdisc, no `gact` action and no `matchall` filter; it has netfilter): loss is an iptables
 * `statistic --mode random` DROP, delay an iptables NFQUEUE whose packets `nfqueue-delay.py` holds, a
 * partition a DROP of everything. Each fault is one rule set in the FORWARD chain, removed by `heal`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export type HostName = 'client' | 'api' | 'worker' | 'postgres' | 'redis';
const HOSTS: HostName[] = ['client', 'api', 'worker', 'postgres', 'redis'];

export type Fault = { kind: 'loss'; percent: number } | { kind: 'delay'; ms: number } | { kind: 'partition' };

/** Namespaces are named `netfault-<tag>-<host>`: cleanup.sh removes what a run left by that prefix. */
export const NAMESPACE_PREFIX = 'netfault-';
const CLEANUP = path.join(__dirname, 'cleanup.sh');
const DELAYER = path.join(__dirname, 'nfqueue-delay.py');
const QUEUE_NUM = 7;

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  return r.stdout;
}

/**
 * Why this machine cannot run the harness, or null when it can: root, `ip`, `iptables`, and a namespace
 * that can really be made (a container without CAP_SYS_ADMIN cannot).
 */
export function whyNoNamespaces(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root: network namespaces need CAP_SYS_ADMIN';
  for (const tool of ['ip', 'iptables']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `no \`${tool}\` on PATH (.ci/run installs iptables)`;
  }
  const probe = `${NAMESPACE_PREFIX}probe-${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `\`ip netns add\` refused: ${made.stderr.trim()}`;
  const filter = spawnSync('ip', ['netns', 'exec', probe, 'iptables', '-A', 'FORWARD', '-j', 'DROP'], { encoding: 'utf8' });
  spawnSync('ip', ['netns', 'del', probe]);
  if (filter.status !== 0) return `iptables refused in a namespace (no netfilter?): ${filter.stderr.trim()}`;
  return null;
}

export class NetfaultNetwork {
  /** Per run: several runs on one machine get their own names and subnet. */
  readonly tag = process.pid.toString(36).slice(-4);
  readonly subnet = 16 + (process.pid % 200);
  private delayer: ChildProcess | null = null;

  ns(host: HostName): string {
    return `${NAMESPACE_PREFIX}${this.tag}-${host === 'postgres' ? 'pg' : host}`;
  }

  get router(): string {
    return `${NAMESPACE_PREFIX}${this.tag}-router`;
  }

  /** The host's address on its link (the router's is one below it). */
  address(host: HostName): string {
    return `10.231.${this.subnet}.${4 * HOSTS.indexOf(host) + 2}`;
  }

  private routerAddress(host: HostName): string {
    return `10.231.${this.subnet}.${4 * HOSTS.indexOf(host) + 1}`;
  }

  create(): void {
    run('ip', ['netns', 'add', this.router]);
    run('ip', ['-n', this.router, 'link', 'set', 'lo', 'up']);
    run('ip', ['netns', 'exec', this.router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    for (const [i, host] of HOSTS.entries()) {
      const hostSide = `nf${this.tag}${i}h`;
      const routerSide = `nf${this.tag}${i}r`;
      run('ip', ['-n', this.router, 'link', 'add', routerSide, 'type', 'veth', 'peer', 'name', hostSide]);
      run('ip', ['-n', this.router, 'addr', 'add', `${this.routerAddress(host)}/30`, 'dev', routerSide]);
      run('ip', ['-n', this.router, 'link', 'set', routerSide, 'up']);
      if (host === 'client') {
        // The test's own end, in the root namespace: one route to the hosts' range, nothing else.
        run('ip', ['-n', this.router, 'link', 'set', hostSide, 'netns', '1']);
        run('ip', ['addr', 'add', `${this.address(host)}/30`, 'dev', hostSide]);
        run('ip', ['link', 'set', hostSide, 'up']);
        run('ip', ['route', 'add', `10.231.${this.subnet}.0/24`, 'via', this.routerAddress(host)]);
        continue;
      }
      run('ip', ['netns', 'add', this.ns(host)]);
      run('ip', ['-n', this.router, 'link', 'set', hostSide, 'netns', this.ns(host)]);
      run('ip', ['-n', this.ns(host), 'link', 'set', 'lo', 'up']);
      run('ip', ['-n', this.ns(host), 'addr', 'add', `${this.address(host)}/30`, 'dev', hostSide]);
      run('ip', ['-n', this.ns(host), 'link', 'set', hostSide, 'up']);
      run('ip', ['-n', this.ns(host), 'route', 'add', `10.231.${this.subnet}.0/24`, 'via', this.routerAddress(host)]);
    }
  }

  /** A process on a host; `argv` runs as is inside its namespace. */
  spawn(host: HostName, argv: string[], env: NodeJS.ProcessEnv, cwd?: string): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.ns(host), ...argv], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  private iptables(args: string[]): void {
    run('ip', ['netns', 'exec', this.router, 'iptables', ...args]);
  }

  /**
   * Makes `fault` on the link between two hosts (both directions; delay on the way from `a` to `b` only,
   * as netem on a's interface would, so each round trip gains that much). Throws what the kernel refused.
   */
  async apply(fault: Fault, a: HostName, b: HostName): Promise<void> {
    const [from, to] = [this.address(a), this.address(b)];
    // A rule without a target first, in each direction: it only counts what crosses the link (packets()).
    for (const [s, d] of [[from, to], [to, from]]) this.iptables(['-A', 'FORWARD', '-s', s, '-d', d]);
    const both = (rule: string[]) => {
      this.iptables(['-A', 'FORWARD', '-s', from, '-d', to, ...rule]);
      this.iptables(['-A', 'FORWARD', '-s', to, '-d', from, ...rule]);
    };
    if (fault.kind === 'loss') both(['-m', 'statistic', '--mode', 'random', '--probability', String(fault.percent / 100), '-j', 'DROP']);
    if (fault.kind === 'partition') both(['-j', 'DROP']);
    if (fault.kind === 'delay') {
      if (spawnSync('sh', ['-c', 'command -v python3']).status !== 0) throw new Error('no python3 to hold the packets (nfqueue-delay.py)');
      await this.startDelayer(fault.ms);
      // --queue-bypass: should the delayer die, packets flow undelayed rather than the link going dark.
      this.iptables(['-A', 'FORWARD', '-s', from, '-d', to, '-j', 'NFQUEUE', '--queue-num', String(QUEUE_NUM), '--queue-bypass']);
    }
  }

  /** Packets that reached the faulted link so far, and those the fault dropped or held (the rules' counters). */
  packets(): { crossed: number; hit: number } {
    const counted = { crossed: 0, hit: 0 };
    for (const line of run('ip', ['netns', 'exec', this.router, 'iptables', '-S', 'FORWARD', '-v']).split('\n')) {
      const m = /^-A FORWARD .*-c (\d+) \d+(.*)$/.exec(line);
      if (m) counted[m[2].includes('-j ') ? 'hit' : 'crossed'] += Number(m[1]);
    }
    return counted;
  }

  /** Removes every fault: the FORWARD chain emptied, the delayer stopped once its held packets are out. */
  async heal(): Promise<void> {
    this.iptables(['-F', 'FORWARD']);
    const d = this.delayer;
    this.delayer = null;
    if (d && d.exitCode === null) {
      await new Promise((r) => setTimeout(r, 1000));
      await new Promise<void>((resolve) => { d.once('exit', () => resolve()); d.kill('SIGTERM'); });
    }
  }

  private startDelayer(ms: number): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', this.router, 'python3', DELAYER, String(QUEUE_NUM), String(ms)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.delayer = child;
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`nfqueue-delay.py did not bind: ${out}`)), 10_000);
      child.stdout!.on('data', (d) => { out += d; if (out.includes('bound')) { clearTimeout(timer); resolve(); } });
      child.stderr!.on('data', (d) => { out += d; });
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`nfqueue-delay.py exited ${code}: ${out}`)); });
    });
  }

  /** Every process in these namespaces killed by its id, the namespaces (and so their veths) and the root route gone. */
  destroy(): void {
    execFileSync(CLEANUP, [`${NAMESPACE_PREFIX}${this.tag}-`], { stdio: 'inherit', timeout: 60_000 });
  }
}
