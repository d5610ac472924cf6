/**
 * Where a notification leads in the web application. The server stores the
 * public API's address of what a notification is about (a post, the channels,
 * a series, a feed) or, for newer ones, the page's own path; this turns either
 * into the page that shows it. Unknown addresses lead nowhere rather than to a
 * JSON answer.
 */
const API = '/api/public/v1';

const PAGES: [RegExp, (id: string) => string][] = [
  [/^\/posts\/([^/?#]+)$/, (id) => `/posts/${id}`],
  [/^\/series\/([^/?#]+)$/, (id) => `/series/${id}`],
  [/^\/integrations(?:\/[^/?#]*)?$/, () => '/channels'],
  [/^\/feeds(?:\/[^/?#]*)?$/, () => '/feeds'],
];

export function pageOfNotification(link: string | null): string | undefined {
  if (!link) return undefined;
  const path = link.startsWith(`${API}/`) ? link.slice(API.length) : link;
  for (const [pattern, page] of PAGES) {
    const match = pattern.exec(path);
    if (match) return page(decodeURIComponent(match[1] ?? ''));
  }
  return undefined;
}
