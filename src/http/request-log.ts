/**
 * Request logging (issue 12 part 9): one line per request, never its headers (they carry keys and
 * tokens, and are noise). Requests the service makes to itself — the sandbox's connectors calling
 * the vendor simulators mounted on the same server — log at `debug`, so the default `info` level
 * shows only what callers from outside the process asked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp, type Options } from 'pino-http';
import { SIMULATOR_MOUNT } from '../simulators';

/** Paths that only the process itself calls (its own simulated vendors). */
export function isInternalRequest(req: IncomingMessage): boolean {
  return pathOf(req).startsWith(`${SIMULATOR_MOUNT}/`);
}

/** Express strips a router's mount point from `url` while inside it; `originalUrl` keeps the whole path. */
const pathOf = (req: IncomingMessage): string => (((req as { originalUrl?: string }).originalUrl ?? req.url) ?? '').split('?')[0];

const QUIET = new Set(['/healthz', '/metrics']);

export function requestLogOptions(logger: Logger): Options {
  return {
    logger,
    genReqId: (req, res) => {
      // A caller's own id is kept only when it is plain (it goes back in a header and in bodies).
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,100}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    autoLogging: { ignore: (req) => QUIET.has(pathOf(req)) },
    customLogLevel: (req, res, err) => {
      if (err || res.statusCode >= 500) return 'error';
      return isInternalRequest(req) ? 'debug' : 'info';
    },
    // Method, path and id only: no headers, no remote port, no query (it may carry ids worth keeping out of logs).
    serializers: {
      req: (req: IncomingMessage & { id?: unknown; raw?: IncomingMessage }) => ({
        id: req.id,
        method: req.method,
        path: pathOf(req.raw ?? req),
      }),
      res: (res: ServerResponse & { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

export const requestLogger = (logger: Logger) => pinoHttp(requestLogOptions(logger));
