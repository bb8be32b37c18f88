/**
 * Request logging (docs/architecture.md, Operations): one line per request, never its headers (they carry keys and
 * tokens, and are noise). Requests the service makes to itself — the sandbox's connectors calling
 * the vendor simulators mounted on the same server — log at `debug`, so the default `info` level
 * shows only what callers from outside the process asked. `error` is for what an operator must act on
 * (a 500); a 501 `not_supported` is info, a vendor's 502-504 warn (docs/architecture.md, Operations).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp, type Options } from 'pino-http';

/**
 * Where the sandbox's vendor simulators are mounted on our own server (src/simulators mounts them here):
 * declared with the request log, which treats calls under it as the process's own.
 */
export const SIMULATOR_MOUNT = '/sandbox-vendors';

/** Paths that only the process itself calls (its own simulated vendors). */
export function isInternalRequest(req: IncomingMessage): boolean {
  return pathOf(req).startsWith(`${SIMULATOR_MOUNT}/`);
}

/** Express strips a router's mount point from `url` while inside it; `originalUrl` keeps the whole path. */
const pathOf = (req: IncomingMessage): string => (((req as { originalUrl?: string }).originalUrl ?? req.url) ?? '').split('?')[0];

/**
 * Links that carry a one-time token in their path (docs/architecture.md, Pages and People): a connect
 * link and its progress page, a magic sign-in link, an invitation, a console link. Logged without it.
 */
const TOKEN_PATHS = /^\/(connect\/progress|connect(?!\/oauth\/)|sign-in\/link|invitations(?!\/accept$)|console\/link)\/[^/]+/;
export const withoutTokens = (path: string): string => path.replace(TOKEN_PATHS, (_m, prefix: string) => `/${prefix}/[token]`);

const QUIET = new Set(['/healthz', '/metrics']);

/** The Error pino-http makes up for a 5xx answer when nothing was thrown. */
const isSynthetic = (err: Error) => /^failed with status code \d+$/.test(err.message);

const withoutErr = (val: Record<string, unknown>) => Object.fromEntries(Object.entries(val).filter(([k]) => k !== 'err'));

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
      if (err || res.statusCode === 500) return 'error';
      if (res.statusCode > 500 && res.statusCode !== 501) return 'warn';
      return isInternalRequest(req) ? 'debug' : 'info';
    },
    // pino-http makes up an Error (with its own stack) for every 5xx. Only a 500 is ours to explain (the
    // error handler logs the real error with the request id); a 501 is a refusal we meant to give, and
    // 502-504 are the vendor's or a write's wait (the answer says which): no stack for them.
    customErrorObject: (_req, res, err, val) => (res.statusCode === 500 || !isSynthetic(err) ? val : withoutErr(val)),
    customErrorMessage: (_req, res, err) => (res.statusCode === 500 || !isSynthetic(err) ? 'request errored' : 'request completed'),
    // Method, path and id only: no headers, no remote port, no query (it may carry ids worth keeping out of logs).
    serializers: {
      req: (req: IncomingMessage & { id?: unknown; raw?: IncomingMessage }) => ({
        id: req.id,
        method: req.method,
        path: withoutTokens(pathOf(req.raw ?? req)),
      }),
      res: (res: ServerResponse & { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

export const requestLogger = (logger: Logger) => pinoHttp(requestLogOptions(logger));
