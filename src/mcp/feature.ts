/**
 * MCP at the base address (design.md section 9): Streamable HTTP, stateless, JSON responses.
 * The API key is checked before the MCP layer sees the request, so a missing or bad key is the
 * same 401 Error envelope as on REST. Each POST gets its own server and transport; nothing is kept.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../feature';
import { sendError } from '../rest/http-errors';
import type { Caller } from '../access/caller';
import { createMcpServer } from './tools';

/** What the SDK's stateless example answers: there is no session stream to open (GET) or end (DELETE). */
function methodNotAllowed(_req: Request, res: Response): void {
  res.status(405).setHeader('Allow', 'POST');
  res.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.' }, id: null });
}

export const mcpFeature: FeatureModule = {
  name: 'mcp',
  mount(app, services) {
    const { publicUrl } = services.config;

    app.post('/', async (req: Request, res: Response) => {
      let caller: Caller;
      try {
        caller = await services.access.authenticate(req.header('x-api-key') ?? undefined);
      } catch (err) {
        if (err instanceof ServiceError) return sendError(res, publicUrl, err.code, err.message, err.extras);
        throw err;
      }

      const server = createMcpServer({ services, caller, log: req.log ?? services.logger });
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
