/**
 * Answers Node's HTTP server gives by itself, before any route runs, carry the Error envelope too
 * (docs/architecture.md, Errors): a request it cannot parse (400), headers over its limit (431) and an `Expect` it
 * does not take (417), a request slower than the time limits (408). Node would otherwise close with an empty body.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors/error-bodies';
import type { ErrorCode } from '../errors/error-codes';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 417: 'Expectation Failed', 431: 'Request Header Fields Too Large' };

function raw(status: number, code: ErrorCode, message: string, publicUrl: string): string {
  const body = JSON.stringify(errorBody(publicUrl, code, message));
  return `HTTP/1.1 ${status} ${REASONS[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

export function answerClientErrorsAsJson(server: http.Server, publicUrl: () => string): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or timed-out socket has no one left to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) { socket.destroy(); return; }
    // Headers or body slower than the server's limits (src/http/connection-limits.ts).
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      socket.end(raw(408, 'request_timeout', 'The request did not arrive within the server\'s time limit; the connection is closed.', publicUrl()));
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    socket.end(tooLarge
      ? raw(431, 'headers_too_large', 'The request headers are too large.', publicUrl())
      : raw(400, 'bad_request', 'The HTTP request could not be read.', publicUrl()));
  });
  server.on('checkExpectation', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = JSON.stringify(errorBody(publicUrl(), 'expectation_failed', 'Only `Expect: 100-continue` is supported.'));
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });
}
