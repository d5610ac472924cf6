/** The few server-rendered pages (connecting a channel, logging in, consent) share this frame. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Makes any text safe inside HTML text and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** A complete page; `body` must already be escaped HTML. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · Herald</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1f2328}button{font:inherit;padding:.4rem 1rem;cursor:pointer}li{margin:.5rem 0}.error{color:#b42318}img{width:32px;height:32px;border-radius:50%;vertical-align:middle;margin-right:.5rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
