/**
 * Halo answers a refused request with an HTTP status and a short message; the exact error body is
 * not documented (unconfirmed), so the simulator sends the message as a JSON string, which is how an
 * ASP.NET API such as Halo's renders `BadRequest("...")`.
 */
export class HaloApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'HaloApiError';
  }
}

export const badRequest = (message: string) => new HaloApiError(400, message);
export const notFound = (message: string) => new HaloApiError(404, message);
