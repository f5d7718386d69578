import type { Response } from 'express';

/** An error answer of the API: a status, a stable type and a message meant for people; never a stack. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const notFoundStore = (storeId: string) => new HttpError(404, 'not_found_error', `no store ${JSON.stringify(storeId)}`);

export function sendError(res: Response, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json({ error: { type: error.type, message: error.message } });
}
