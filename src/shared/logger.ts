/** Structured JSON logs (pino). Secrets never reach a log line: keys, tokens and credentials are redacted. */
import pino, { type DestinationStream, type Logger } from 'pino';

/** `destination` is for tests that read what was logged; by default, stdout. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
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
  }, destination);
}
