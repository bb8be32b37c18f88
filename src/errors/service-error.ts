import { ERROR_CODES, type ErrorCode } from './error-codes';

export interface ServiceErrorExtras {
  details?: Record<string, unknown>;
  needed?: string;
  allowed?: string[];
  /** Seconds, for 429 and 503. */
  retryAfterSeconds?: number;
  /** For 405: the methods the path takes. */
  allow?: string[];
}

/**
 * The one exception the domain throws. The REST boundary maps it to the Error envelope, GraphQL to
 * an error with `extensions.code`, MCP to a tool error: one code list, one mapper per surface.
 */
export class ServiceError extends Error {
  readonly status: number;
  constructor(readonly code: ErrorCode, message: string, readonly extras: ServiceErrorExtras = {}) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_CODES[code].status;
  }

  static grantMissing(needed: string): ServiceError {
    return new ServiceError('grant_missing', `This key lacks the grant "${needed}" on the tenant's connection.`, {
      needed,
      details: { needed },
    });
  }
  static notFound(what = 'Tenant'): ServiceError {
    return new ServiceError('not_found', `${what} not found.`);
  }
  static notSupported(message: string): ServiceError {
    return new ServiceError('not_supported', message);
  }
}
