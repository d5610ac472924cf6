/**
 * The few server-rendered pages of the sign-in and consent steps (and of the
 * device-flow server): plain HTML forms that work without JavaScript.
 */
import type { FastifyReply } from 'fastify';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Hidden form fields carrying `values` through a form post. */
export function hiddenFields(values: Record<string, string | undefined>): string {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v!)}">`)
    .join('');
}

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}\n' +
  'h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}' +
  'input[type=text],input[type=email],input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}\n' +
  'button{margin:1rem .5rem 0 0;padding:.5rem 1rem;font-size:1rem}.error{color:#a00;border:1px solid #a00;padding:.5rem}' +
  '.code{font-family:monospace;font-size:1.4rem;letter-spacing:.2rem}';

/** Sends a complete page; pages that take decisions must never be framed by another site. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(
      '<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
        `<title>${escapeHtml(title)}</title><style>${STYLE}</style><body>${body}</body></html>`,
    );
}

export function errorBox(message: string | undefined): string {
  return message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '';
}

/** `base` with `params` added to its query (keeping the query it has). */
export function withQuery(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}
