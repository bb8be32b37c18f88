/** Structured JSON logs (pino). Secrets never reach a log line: keys, tokens and credentials are redacted. */
import pino, { type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]',
        '*.credentials', '*.password', '*.secret', '*.clientSecret', '*.privateKey', '*.access_token',
      ],
      censor: '[redacted]',
    },
  });
}
