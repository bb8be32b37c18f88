/**
 * The embedded database (PGlite) in a process of its own, like a real PostgreSQL server.
 *
 * Why a child process: PGlite's WASM heap only grows (initdb alone leaves about 400 MiB behind; a
 * synced 50,000-ticket tenant took the service process to 807 MiB when it ran inside it), and its
 * queries ran on the service's event loop. In a child, the service process keeps only its own
 * memory, the database runs on another core, and nothing else about it changes: it is still reached
 * over PostgreSQL's wire protocol on a Unix socket in a fresh 0700 directory, never on TCP.
 *
 * Lifecycle: the child reports `ready` over IPC once it serves the socket; it closes the database
 * cleanly and exits when asked (`stop`) or when its parent goes away (the IPC channel closes), so a
 * killed service never leaves a database process behind.
 *
 * The socket is served by a small handler of our own (SERVE below), not @electric-sql/pglite-socket:
 * that server runs every protocol message through PGlite on its own (Bind, Describe, Execute and Sync
 * of one statement are four entries into the WASM) and writes every answer part with a write of its
 * own. Here all the complete messages of one read go to PGlite in one call, which runs them in order as
 * PostgreSQL does, and its answer goes back in one write. Measured on this machine (2 vCPU VM, where a
 * write that wakes the other process costs about 0.2 ms), one statement at p50: a SELECT by key 0.45 ->
 * 0.33 ms, an INSERT 0.53 -> 0.37 ms; statements the service sends together (prepared.ts) cost one
 * round trip.
 *
 * A new cluster is made by a short-lived process of its own (initdb's memory leaves with it). In
 * memory (no DATA_DIR) that process writes a tarball to a private directory, which every in-memory
 * database of this service process loads instead of running initdb again (tests start many).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Shared buffers inside the WASM heap; the rest of the cache is the OS's. */
const SHARED_BUFFERS = '32MB';
const START_TIMEOUT_MS = 180_000;
/** How long a database process waits for another one to close the same data directory (LOCK below). */
const LOCK_WAIT_MS = 60_000;

/**
 * Plain JavaScript, run with `node -e`: it must not depend on how the service itself was built.
 * PGLITE_MODE `init` makes a cluster and exits (initdb's memory goes with that process); `serve`
 * opens one and serves it.
 */
const CHILD_SCRIPT = `
const fs = require('node:fs');
const net = require('node:net');
const { PGlite } = require(process.env.PGLITE_ENTRY);
const env = process.env;
let db = null;
let server = null;
let closing = null;
let locked = false;
function close(code) {
  closing ??= (async () => {
    try { if (server) server.close(); } catch {}
    active?.socket.destroy();
    for (const socket of waiting) socket.destroy();
    // The last statements of the connection run to their end before the database closes.
    await active?.work.catch(() => undefined);
    try { if (db) await db.close(); } catch {}
    // Only once the files are closed may the next process open them.
    if (locked) { try { if (fs.readFileSync(env.PGLITE_LOCK, 'utf8') === String(process.pid)) fs.unlinkSync(env.PGLITE_LOCK); } catch {} }
    process.exit(code);
  })();
}

// LOCK: one process at a time on a data directory, as postmaster.pid is for a server (PGlite keeps none
// that another process would honour). A database process whose service was killed is still closing its
// files when the restarted service starts the next one; two on one directory lose committed rows (a
// commit's reservation, and with it exactly once). The lock file holds its owner's pid: a live owner is
// waited for, a dead one's file is taken over.
async function lockDataDir() {
  const deadline = Date.now() + Number(env.PGLITE_LOCK_WAIT_MS);
  for (;;) {
    try {
      fs.writeFileSync(env.PGLITE_LOCK, String(process.pid), { flag: 'wx', mode: 0o600 });
      locked = true;
      return;
    } catch (err) { if (err.code !== 'EEXIST') throw err; }
    let owner = 0;
    try { owner = Number(fs.readFileSync(env.PGLITE_LOCK, 'utf8')); } catch {}
    let alive = false;
    if (owner > 0) { try { process.kill(owner, 0); alive = true; } catch (err) { alive = err.code === 'EPERM'; } }
    if (!alive) { try { fs.unlinkSync(env.PGLITE_LOCK); } catch {} continue; }
    if (Date.now() > deadline) throw new Error('the data directory is in use by process ' + owner + ' (' + env.PGLITE_LOCK + ')');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
process.on('disconnect', () => close(0));
process.on('message', (m) => { if (m === 'stop') close(0); });
process.on('SIGTERM', () => close(0));

// SERVE: PostgreSQL's wire protocol on the Unix socket, one connection at a time (PGlite is one
// session: messages of two connections must not interleave); a second connection waits, paused, until
// the one before it has closed.
const SSL_REQUEST = 80877103, GSSENC_REQUEST = 80877104, CANCEL_REQUEST = 80877102;
let active = null;
const waiting = [];
function serveNext() {
  active = null;
  while (!active && waiting.length && !closing) {
    const socket = waiting.shift();
    if (!socket.destroyed) serve(socket);
  }
}
/** Runs protocol messages in PGlite and answers them in one write (corked: one writev, no joining copy). */
function exec(conn, bytes) {
  return db.runExclusive(async () => {
    const out = [];
    // Copied: the data is a view of PGlite's memory, which its next output may reuse.
    await db.execProtocolRawStream(bytes, { onRawData: (d) => { out.push(Buffer.from(d)); } });
    if (!out.length || conn.socket.destroyed) return;
    conn.socket.cork();
    for (const part of out) conn.socket.write(part);
    conn.socket.uncork();
  });
}
function serve(socket) {
  // chunks: what arrived of an incomplete message, joined once it is whole (a page of a sync is
  // megabytes in 64 KiB reads: joining at every read would copy it again each time).
  const conn = { socket, work: Promise.resolve(), started: false, chunks: [], size: 0, need: 0 };
  active = conn;
  const then = (fn) => { conn.work = conn.work.then(fn).catch(() => socket.destroy()); };
  socket.on('data', (data) => {
    conn.chunks.push(data);
    conn.size += data.length;
    if (conn.size < conn.need) return;
    const buf = conn.chunks.length === 1 ? conn.chunks[0] : Buffer.concat(conn.chunks, conn.size);
    let off = 0;
    while (buf.length - off >= 8 && !conn.started) {
      // Before the startup message, packets have no type byte: length, then a code.
      const len = buf.readInt32BE(off);
      if (len < 8 || len > 10000) return void socket.destroy();
      if (buf.length - off < len) break;
      const code = buf.readInt32BE(off + 4);
      const packet = buf.subarray(off, off + len);
      off += len;
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) then(() => { socket.write('N'); });
      else if (code === CANCEL_REQUEST) return void socket.end();
      else { conn.started = true; then(() => exec(conn, packet)); }
    }
    if (conn.started) {
      // Every complete message goes in one call; a Terminate ends the connection after those before it.
      const from = off;
      let terminate = false;
      while (buf.length - off >= 5) {
        const len = 1 + buf.readInt32BE(off + 1);
        if (len < 5) return void socket.destroy();
        if (buf.length - off < len) break;
        if (buf[off] === 0x58) { terminate = true; break; }
        off += len;
      }
      if (off > from) { const batch = buf.subarray(from, off); then(() => exec(conn, batch)); }
      if (terminate) { then(() => { socket.end(); }); off = buf.length; }
    }
    const rest = buf.subarray(off);
    conn.chunks = rest.length ? [rest] : [];
    conn.size = rest.length;
    // The length of the message under way, once its header is in: nothing is joined before it is whole.
    conn.need = conn.started ? (rest.length >= 5 ? 1 + rest.readInt32BE(1) : 5) : (rest.length >= 8 ? rest.readInt32BE(0) : 8);
  });
  socket.on('error', () => socket.destroy());
  socket.on('close', () => {
    // A transaction the connection left open is rolled back before the next connection runs anything.
    then(async () => { if (db.isInTransaction()) await db.exec('ROLLBACK'); });
    void conn.work.finally(serveNext);
  });
  socket.resume();
}

(async () => {
  if (env.PGLITE_MODE === 'init') {
    db = await PGlite.create(env.PGLITE_DIR || undefined);
    if (!env.PGLITE_DIR) {
      const tarball = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
      // Written aside and renamed: a process sharing the directory reads a whole template or none.
      const aside = env.PGLITE_TEMPLATE + '.' + process.pid + '.tmp';
      fs.writeFileSync(aside, tarball, { mode: 0o600 });
      fs.renameSync(aside, env.PGLITE_TEMPLATE);
    }
    return close(0);
  }
  if (env.PGLITE_LOCK) await lockDataDir();
  const options = { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=' + env.PGLITE_SHARED_BUFFERS] };
  db = env.PGLITE_DIR
    ? await PGlite.create(env.PGLITE_DIR, options)
    : await PGlite.create({ ...options, loadDataDir: new Blob([fs.readFileSync(env.PGLITE_TEMPLATE)]) });
  server = net.createServer({ pauseOnConnect: true }, (socket) => {
    if (closing) return socket.destroy();
    if (active) waiting.push(socket); else serve(socket);
  });
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(env.PGLITE_SOCKET, resolve); });
  process.send('ready');
})().catch((err) => { process.stderr.write(String((err && err.stack) || err)); close(1); });
`;

function spawnChild(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['-e', CHILD_SCRIPT], {
    // Only what the database needs: no secrets of the service, no NODE_OPTIONS of a test runner.
    env: {
      PATH: process.env.PATH ?? '',
      PGLITE_ENTRY: require.resolve('@electric-sql/pglite'),
      PGLITE_SHARED_BUFFERS: SHARED_BUFFERS,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

function collectStderr(child: ChildProcess): () => string {
  let stderr = '';
  child.stderr!.on('data', (d) => { if (stderr.length < 8000) stderr += d; });
  return () => stderr.slice(0, 2000);
}

/** Makes a cluster (on disk, or the in-memory template) in a process that then exits. */
function initCluster(env: Record<string, string>): Promise<void> {
  const child = spawnChild({ ...env, PGLITE_MODE: 'init' });
  const stderr = collectStderr(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`creating the embedded database failed (exit ${code}): ${stderr()}`));
    });
  });
}

export interface EmbeddedCluster {
  /** The database process (its memory is not the service's). */
  pid: number;
  stop(): Promise<void>;
}

let templateDir: string | null = null;
let templateMade: Promise<void> | null = null;

/**
 * A directory that processes started together share for the template (the test runner's, made by
 * test/support/global-setup.ts and passed in EMBEDDED_TEMPLATE_DIR): initdb then runs once per run, not
 * once per test file and child service (about 3 s each here). Taken only when it is this user's own and
 * closed to everyone else, so nobody else can plant a cluster in it.
 */
function sharedTemplateDir(): string | null {
  const dir = process.env.EMBEDDED_TEMPLATE_DIR;
  if (!dir) return null;
  const stat = fs.statSync(dir, { throwIfNoEntry: false });
  const own = stat?.isDirectory() && (stat.mode & 0o077) === 0 && (typeof process.getuid !== 'function' || stat.uid === process.getuid());
  return own ? dir : null;
}

/** Where this process keeps its in-memory cluster template (owner-only; its own is removed at exit). */
function templatePath(): string {
  if (!templateDir) {
    templateDir = sharedTemplateDir();
    if (!templateDir) {
      templateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-pgtemplate-'));
      fs.chmodSync(templateDir, 0o700);
      const dir = templateDir;
      process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    }
  }
  return path.join(templateDir, 'cluster.tar');
}

/**
 * Starts the database process serving `socketPath`: the cluster in `pgDir` (created when new), or an
 * in-memory one when `pgDir` is undefined.
 */
export async function startEmbeddedCluster(pgDir: string | undefined, socketPath: string): Promise<EmbeddedCluster> {
  if (pgDir && !fs.existsSync(path.join(pgDir, 'PG_VERSION'))) await initCluster({ PGLITE_DIR: pgDir });
  const template = pgDir ? null : templatePath();
  if (template && !fs.existsSync(template)) {
    templateMade ??= initCluster({ PGLITE_TEMPLATE: template }).catch((err) => { templateMade = null; throw err; });
    await templateMade;
  }
  const child = spawnChild({
    PGLITE_MODE: 'serve', PGLITE_SOCKET: socketPath,
    // Beside the cluster, not in it: the database's own directory holds only its own files.
    ...(pgDir ? { PGLITE_DIR: pgDir, PGLITE_LOCK: `${pgDir}.lock`, PGLITE_LOCK_WAIT_MS: String(LOCK_WAIT_MS) } : { PGLITE_TEMPLATE: template! }),
  });
  const stderr = collectStderr(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`the embedded database did not start: ${why} ${stderr()}`));
    };
    const timer = setTimeout(() => fail('timed out'), START_TIMEOUT_MS);
    const onEarlyExit = (code: number | null) => fail(`exited with ${code}`);
    child.once('exit', onEarlyExit);
    child.once('message', (m) => {
      if (m !== 'ready') return fail(`said ${String(m)}`);
      clearTimeout(timer);
      child.off('exit', onEarlyExit);
      // The service process must not stay alive for the database process alone.
      child.unref();
      child.channel?.unref();
      (child.stderr as unknown as { unref?: () => void }).unref?.();
      resolve({
        pid: child.pid!,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          // Held again while it closes: the caller awaits its exit, and nothing else may keep this process alive.
          child.ref();
          child.channel?.ref();
          child.send('stop', () => undefined);
          const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000).unref());
          if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
        },
      });
    });
  });
}
