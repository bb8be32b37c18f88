/**
 * MCP at the base address (docs/architecture.md, MCP): Streamable HTTP, stateless, JSON responses.
 * The request is authenticated by the same authenticator as REST (src/access/authenticator.ts: key
 * lookup, the failed-authentication limit per address, the per-key limit) before the MCP layer sees it,
 * so a missing or bad key is the same 401 Error envelope, and 429 past either limit. The body is read
 * after that: bad JSON is JSON-RPC's -32700 Parse error, a request whose params do not fit the SDK's own
 * schema for its method is -32602 Invalid params with a short message (the SDK would answer -32603
 * with its raw schema dump). Each POST gets its own server and transport; nothing is kept.
 * One message per POST: JSON-RPC batches (dropped from the MCP specification) are refused before the
 * transport sees them, and one answer is capped at MCP_MAX_ANSWER_BYTES, so a caller cannot make
 * one request cost unbounded memory and bandwidth.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ClientRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import express, { type Request, type Response } from 'express';
import type { ZodType } from 'zod';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../operations/feature-module';
import { sendError } from '../errors/error-bodies';
import type { Caller } from '../access/caller';
import { createMcpServer, type McpServices } from './tools';
import { toolError } from './tool-result';
import { runOperation } from '../operations/runner';
import { instructionsFor, type VisibleTenantList } from './tenants-resource';

/** A JSON-RPC error answer built from the SDK's own error type. */
function sendRpcError(res: Response, httpStatus: number, id: unknown, error: McpError): void {
  res.status(httpStatus).json({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: error.code, message: error.message } });
}

/** The SDK's schema of each client request, by method. */
const REQUEST_SCHEMAS: ReadonlyMap<string, ZodType> = new Map(
  (ClientRequestSchema.options as unknown as { shape: { method: { value: string } } }[]).map((s) => [s.shape.method.value, s as unknown as ZodType]),
);

/**
 * Invalid params of a request the SDK knows, said briefly (`params.arguments: expected record, received
 * array`); null when the request fits, is a notification, or names a method the SDK answers itself
 * (-32601 Method not found).
 */
export function invalidParams(message: unknown): McpError | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const m = message as { method?: unknown; id?: unknown };
  if (typeof m.method !== 'string' || m.id === undefined) return null;
  const schema = REQUEST_SCHEMAS.get(m.method);
  if (!schema) return null;
  const parsed = schema.safeParse(message);
  if (parsed.success) return null;
  const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.length ? i.path.join('.') : 'request'}: ${i.message}`);
  return new McpError(ErrorCode.InvalidParams, `Invalid params for ${m.method}: ${issues.join('; ')}.`);
}

const readJson = express.json({ limit: '1mb', strict: false });

/** The body as JSON (express.json), read only after authentication. */
function readBody(req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => readJson(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
}

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

/** MCP is a surface, like REST and GraphQL: it runs any operation, so it is given the whole graph. */
export const mcpFeature: FeatureModule<McpServices> = {
  name: 'mcp',
  mount(app, services, operations) {
    const { publicUrl } = services.config;

    app.post('/', async (req: Request, res: Response) => {
      let caller: Caller;
      try {
        caller = await services.authenticator.authenticate(req, res);
      } catch (err) {
        if (err instanceof ServiceError) return sendError(res, publicUrl, err.code, err.message, err.extras);
        throw err;
      }
      try {
        await readBody(req, res);
      } catch (err) {
        const e = err as { type?: string };
        if (e?.type === 'entity.too.large') return sendError(res, publicUrl, 'payload_too_large', 'The request body is over 1 MB; nothing was read.');
        if (e?.type === 'entity.parse.failed') return sendRpcError(res, 400, null, new McpError(ErrorCode.ParseError, 'Parse error: the body is not valid JSON.'));
        return sendRpcError(res, 400, null, new McpError(ErrorCode.InvalidRequest, `Invalid Request: ${(err as Error).message ?? 'the body could not be read'}.`));
      }

      if (Array.isArray(req.body)) return refuseBatch(res);
      const badParams = invalidParams(req.body);
      if (badParams) return sendRpcError(res, 200, (req.body as { id?: unknown }).id, badParams);

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
      // Every page of GET /tenants, as one answer (an agent reads the resource once).
      const tenants = async (): Promise<VisibleTenantList> => {
        const all: VisibleTenantList = { tenants: [], sandbox: true, next_cursor: null };
        if (!listTenants) return { ...all, sandbox: false };
        let cursor: string | null = null;
        for (let page = 0; page < 1000; page++) {
          const query: Record<string, string> = { limit: '500', ...(cursor ? { cursor } : {}) };
          const answer = await runOperation(listTenants, { path: {}, query }, caller, services) as VisibleTenantList;
          all.tenants.push(...answer.tenants);
          all.sandbox &&= answer.sandbox;
          cursor = answer.next_cursor;
          if (!cursor) break;
        }
        return all;
      };
      const instructions = message?.method === 'initialize' ? instructionsFor((await tenants()).tenants) : undefined;
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
