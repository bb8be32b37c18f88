/**
 * Slow clients and greedy addresses (docs/architecture.md, Faults an operator will meet): a request's
 * headers and body must arrive within their time limits (Node's default let a trickling body hold a
 * connection for 300 s), an idle keep-alive connection closes, one socket carries a bounded number of
 * requests, and one remote address holds a bounded number of open connections: past it a new connection
 * is answered 503 `service_unavailable` with Retry-After and closed before anything of it is read.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from '../errors/error-bodies';

export interface HttpLimits {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** 0: no limit. */
  maxRequestsPerSocket: number;
  /** 0: no limit. */
  maxConnectionsPerAddress: number;
}

/** The options of http.createServer: Node checks the time limits every connectionsCheckingInterval (30 s by default). */
export function httpServerOptions(limits: HttpLimits): http.ServerOptions {
  const requestTimeout = limits.requestTimeoutMs;
  return {
    requestTimeout,
    // Node requires headers within the request's own limit.
    headersTimeout: Math.min(limits.headersTimeoutMs, requestTimeout),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(requestTimeout / 4))),
  };
}

/** One client, one key: an IPv4 address reached over IPv6 counts as itself. */
function addressOf(socket: Socket): string {
  const a = socket.remoteAddress ?? 'unknown';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

/**
 * The HTTP server, with the time limits, the per-socket cap and the per-address cap. A refused
 * connection's request, should Node read one, reaches nobody: the 503 was its answer.
 */
export function createLimitedServer(app: http.RequestListener, limits: HttpLimits, publicUrl: () => string): http.Server {
  const refused = new WeakSet<Socket>();
  const server = http.createServer(httpServerOptions(limits), (req, res) => {
    if (!refused.has(req.socket)) app(req, res);
  });
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket > 0 ? limits.maxRequestsPerSocket : null;
  const max = limits.maxConnectionsPerAddress;
  if (max <= 0) return server;
  const open = new Map<string, number>();
  // Before Node's own listener reads anything from the socket.
  server.prependListener('connection', (socket: Socket) => {
    const address = addressOf(socket);
    const count = open.get(address) ?? 0;
    if (count >= max) {
      refused.add(socket);
      const body = JSON.stringify(errorBody(publicUrl(), 'service_unavailable', `This address holds ${max} open connections, the most one client may; reuse or close them, then retry.`));
      socket.on('error', () => undefined);
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 1\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      // A client that keeps its end open is cut.
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return server;
}
