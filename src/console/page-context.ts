/**
 * What a console page is given (docs/architecture.md, Connect sessions and console): the signed-in request
 * and how to run an operation as the MSP. Apart from the router so that the pages it registers do not
 * import it back.
 */
import type { Request, Response } from 'express';
import type { Caller } from '../access/caller';
import type { SafeHtml } from '../pages/html';
import type { FormFields } from '../pages/forms';
import type { Signed } from './ui';

/** One signed-in request: who, as whom, and how to run an operation as the MSP. */
export interface PageContext extends Signed {
  req: Request;
  res: Response;
  caller: Caller;
  tenantId: string;
  form: FormFields;
  run<R = any>(name: string, raw: { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown }): Promise<R>;
  /** Sends a signed-in page. */
  send(current: string, title: string, main: SafeHtml, status?: number, scripts?: string[]): void;
}

export type PageHandler = (ctx: PageContext) => Promise<void>;

export interface ConsoleRoutes {
  get(path: string, handler: PageHandler): void;
  post(path: string, handler: PageHandler): void;
}
