/**
 * A post's release URL is served to API clients and shown as a link: only an
 * http(s) address is kept, whatever a network answers (a webhook receiver may
 * answer `javascript:` or `data:`). Anything else is stored as no URL; the post
 * is published all the same.
 */
import { log } from '../lib/log.ts';

export function keptReleaseUrl(url: string | null | undefined, about: { post: string; channel: string; network: string }): string | null {
  if (!url) return null;
  let scheme: string | undefined;
  try {
    scheme = new URL(url).protocol;
  } catch {
    scheme = undefined;
  }
  if (scheme === 'http:' || scheme === 'https:') return url;
  // The scheme alone: the address itself may carry a token.
  log.warn({ ...about, scheme: scheme?.slice(0, 20) ?? 'none (not a URL)' }, 'release URL not kept: not an http(s) address');
  return null;
}
