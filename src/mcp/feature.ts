/**
 * MCP at the base address (design.md section 9): Streamable HTTP, stateless, JSON responses.
 * The API key is checked before the MCP layer sees the request, so a missing or bad key is the
 * same 401 Error envelope as on REST. Each POST gets its own server and transport; nothing is kept.
 * One message per POST: JSON-RPC batches (dropped from the MCP specification) are refused before the
 * transport sees them, and one answer is capped at MCP_MAX_ANSWER_BYTES, so a caller cannot make
 * one request cost unbounded memory and bandwidth.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../feature';
import { sendError } from '../rest/http-errors';
import type { Caller } from '../access/caller';
import { createMcpServer } from './tools';
import { toolError } from './tool-result';
import { runOperation } from '../operations/runner';
import { instructionsFor, type VisibleTenant } from './tenants-resource';

/** JSON-RPC "Invalid Request" for a batch: one request per POST. */
function refuseBatch(res: Response): void {
  res.status(400).json({
    jsonrpc: '2.0',
    error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported; send one JSON-RPC message per POST.' },
    id: null,
  });
}

type Chunk = string | Uint8Array;
type Done = (err?: Error | null) => void;

/**
 * Holds the transport's answer until it ends (the SDK writes a JSON response in one piece) and
 * sends it only if it fits `maxBytes`; over the cap, the chunks are dropped as they come and
 * `replacement(bytes)` is sent instead. Headers wait with the body, since the size decides them.
 */
function capAnswer(res: Response, maxBytes: number, replacement: (bytes: number) => string): void {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
  let head: unknown[] | undefined;
  let chunks: Buffer[] = [];
  let bytes = 0;
  const take = (chunk: Chunk | undefined, encoding?: BufferEncoding) => {
    if (chunk == null) return;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : Buffer.from(chunk);
    bytes += buf.length;
    if (bytes > maxBytes) chunks = [];
    else chunks.push(buf);
  };
  res.writeHead = ((...args: unknown[]) => { head = args; return res; }) as typeof res.writeHead;
  res.flushHeaders = () => undefined;
  res.write = ((chunk: Chunk, encoding?: BufferEncoding | Done, cb?: Done) => {
    take(chunk, typeof encoding === 'string' ? encoding : undefined);
    const done = typeof encoding === 'function' ? encoding : cb;
    if (done) process.nextTick(done);
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: Chunk | Done, encoding?: BufferEncoding | Done, cb?: Done) => {
    if (typeof chunk === 'function') { cb = chunk; chunk = undefined; }
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    take(chunk, encoding);
    Object.assign(res, original);
    if (bytes > maxBytes) {
      res.removeHeader('content-length');
      res.status(200).type('application/json');
      return res.end(replacement(bytes), cb);
    }
    if (head) res.writeHead(...(head as Parameters<typeof res.writeHead>));
    return res.end(Buffer.concat(chunks), cb);
  }) as typeof res.end;
}

/** What the SDK's stateless example answers: there is no session stream to open (GET) or end (DELETE). */
function methodNotAllowed(_req: Request, res: Response): void {
  res.status(405).setHeader('Allow', 'POST');
  res.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.' }, id: null });
}

export const mcpFeature: FeatureModule = {
  name: 'mcp',
  mount(app, services, operations) {
    const { publicUrl } = services.config;

    app.post('/', async (req: Request, res: Response) => {
      let caller: Caller;
      try {
        caller = await services.access.authenticate(req.header('x-api-key') ?? undefined);
      } catch (err) {
        if (err instanceof ServiceError) return sendError(res, publicUrl, err.code, err.message, err.extras);
        throw err;
      }

      if (Array.isArray(req.body)) return refuseBatch(res);

      const maxBytes = services.config.mcpMaxAnswerBytes;
      const message = req.body as { id?: unknown; method?: unknown } | undefined;
      capAnswer(res, maxBytes, (bytes) => {
        const id = message?.id ?? null;
        const text = `The answer is ${bytes} bytes, over the ${maxBytes}-byte limit of one MCP answer; call again with a lower \`limit\`.`;
        req.log?.warn({ bytes, maxBytes, method: message?.method }, 'MCP answer over the size cap');
        if (message?.method === 'tools/call') {
          const result = toolError(new ServiceError('request_invalid', text, { details: { answer_bytes: bytes, max_bytes: maxBytes } }), publicUrl);
          return JSON.stringify({ jsonrpc: '2.0', id, result });
        }
        return JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: text } });
      });

      const listTenants = operations.find((op) => op.name === 'list_tenants');
      const tenants = async () => listTenants
        ? ((await runOperation(listTenants, { path: {}, query: {} }, caller, services)) as { tenants: VisibleTenant[] }).tenants
        : [];
      const instructions = message?.method === 'initialize' ? instructionsFor(await tenants()) : undefined;
      const server = createMcpServer({ services, caller, operations, log: req.log ?? services.logger, tenants, instructions });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      // express.json already parsed the body; the transport takes it as is.
      await transport.handleRequest(req, res, req.body);
    });
    app.get('/', methodNotAllowed);
    app.delete('/', methodNotAllowed);
  },
};
