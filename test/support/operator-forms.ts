/**
 * The audit UI's operator forms as a browser posts them, for supertest: a cookie-keeping client that sends
 * the Host the app checks and, on a POST, the Origin and Sec-Fetch-Site of a same-origin form, plus the
 * CSRF token a page's form carries. Shared by the route tests of the UI's state changes (rollback,
 * redaction, review, dreams, a read-only store).
 */
import type { Express } from 'express';
import request from 'supertest';

export const UI_HOST = '127.0.0.1:3000';
export const UI_ORIGIN = `http://${UI_HOST}`;

/** The CSRF token of the first form in `html`. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field in the page');
  return match[1];
}

/** A client that keeps its cookies: GET with the app's Host, POST as a same-origin form. */
export function formClient(app: Express) {
  const agent = request.agent(app);
  return {
    agent,
    get: (url: string) => agent.get(url).set('Host', UI_HOST),
    post: (url: string) => agent.post(url).set('Host', UI_HOST).set('Origin', UI_ORIGIN).set('Sec-Fetch-Site', 'same-origin').type('form'),
  };
}
