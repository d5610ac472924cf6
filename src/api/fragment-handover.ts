/**
 * Some networks send the person back with what Herald needs in the URL fragment
 * (after `#`), which browsers never send to a server. This small page reads the
 * fragment in the browser and loads the same callback again with it in the
 * query, once (the `handed_over` mark stops a second round).
 */
import crypto from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Marks a callback that already went through the page. */
export const HANDED_OVER = 'handed_over';

const SCRIPT =
  'var q=new URLSearchParams(location.search);' +
  'new URLSearchParams(location.hash.slice(1)).forEach(function(v,k){if(!q.has(k))q.set(k,v)});' +
  `q.set('${HANDED_OVER}','1');location.replace(location.pathname+'?'+q.toString());`;
const SCRIPT_HASH = crypto.createHash('sha256').update(SCRIPT).digest('base64');

/** Whether a callback should go through the page first: a browser's, without the parameters, not yet handed over. */
export function needsHandover(query: Record<string, string>, params: readonly string[] | undefined, wantsJson: boolean): boolean {
  if (!params || wantsJson || query[HANDED_OVER]) return false;
  return !params.some((name) => name in query);
}

export function sendHandoverPage(reply: FastifyReply, network: string): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; frame-ancestors 'none'`)
    .header('referrer-policy', 'no-referrer')
    .send(
      '<!doctype html><html lang="en"><meta charset="utf-8"><title>Connecting…</title>' +
        `<body><p>Finishing the connection to ${network}…</p>` +
        '<noscript><p>Turn on JavaScript for this page: it hands the sign-in to Herald.</p></noscript>' +
        `<script>${SCRIPT}</script></body></html>`,
    );
}
