import type { Request, Response } from 'express';

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

/**
 * The error as JSON, or as a small page to a browser opening the audit UI (a request outside the API
 * that prefers text/html): a browser that cancels the Basic-auth prompt shows the body of the 401, which
 * should tell a person what to do rather than print JSON.
 */
export function sendError(res: Response, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status);
  if (wantsPage(res.req)) {
    // Plain on purpose: without a key the stylesheet would be refused too.
    res.setHeader('Content-Security-Policy', "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(errorPage(error));
    return;
  }
  res.json({ error: { type: error.type, message: error.message } });
}

function wantsPage(req: Request | undefined): boolean {
  if (!req || req.path === '/api' || req.path.startsWith('/api/') || req.path === '/healthz') return false;
  return req.accepts(['json', 'html']) === 'html';
}

const HEADINGS: Record<number, string> = {
  400: 'Bad request',
  401: 'A key is needed',
  403: 'Not allowed with this key',
  404: 'Not found',
  413: 'Too large',
  429: 'Too many requests',
  503: 'Busy',
};

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);

function errorPage(error: HttpError): string {
  const heading = HEADINGS[error.status] ?? 'Error';
  const help =
    error.status === 401
      ? '<p>This memgit server opens its audit UI with a key: when the browser asks, enter a key made with <code>memgit keys create</code> ' +
        '(scope read or above) as the password; the user name is not used. <a href="">Try again</a>.</p>'
      : error.status === 404 || error.status === 403
        ? '<p><a href="/">The stores this key can read</a></p>'
        : '';
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `  <title>${escapeHtml(heading)} · memgit</title>\n</head>\n<body>\n` +
    `  <main>\n    <h1>${escapeHtml(heading)}</h1>\n    <p>${escapeHtml(error.message)}</p>\n    ${help}\n  </main>\n</body>\n</html>\n`
  );
}
