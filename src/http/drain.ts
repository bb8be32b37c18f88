/**
 * Closing the HTTP server without waiting on idle keep-alive connections (docs/architecture.md, Running it).
 *
 * `server.close()` stops listening and closes the connections idle at that moment, then waits for every
 * other connection to end. A connection whose request was in flight becomes idle when its answer is
 * written, and a keep-alive client (undici honours our `Keep-Alive: timeout=65`) then holds it open for
 * up to 64 s: one request under way at shutdown held the close that long. The sandbox's own vendor calls
 * go to simulators on this very server, so a sync running at shutdown always had such a request.
 *
 * Once draining: answers not yet begun say `Connection: close` (so do those of requests that still
 * arrive on an open connection), an answer that ends closes the connections left idle, and after
 * `graceMs` whatever is still open (a slow client reading a large answer) is cut.
 */
import type http from 'node:http';

export interface DrainableServer {
  /** Stops listening; resolves when every connection has ended (at most `graceMs` after). */
  drain(graceMs: number): Promise<void>;
}

export function drainable(server: http.Server): DrainableServer {
  let draining = false;
  const underWay = new Set<http.ServerResponse>();
  /** Tells the client the connection ends with this answer, when its head is not out yet. */
  const last = (res: http.ServerResponse) => { if (!res.headersSent) res.setHeader('connection', 'close'); };
  // Before the app's listener, so that an answer the app ends at once is still seen to end.
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (draining) last(res);
    underWay.add(res);
    // 'close' comes after the answer ended (or the connection was lost), once Node marked the connection idle.
    res.once('close', () => { underWay.delete(res); if (draining) server.closeIdleConnections(); });
  });
  return {
    drain(graceMs: number): Promise<void> {
      draining = true;
      for (const res of underWay) last(res);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      return closed.finally(() => clearTimeout(cut));
    },
  };
}
