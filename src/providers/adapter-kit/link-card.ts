/**
 * What a link preview shows of a web page: its title, description and image,
 * read from the page's Open Graph tags (falling back to <title> and the
 * description meta tag). Networks that do not build previews themselves
 * (Bluesky) get them from here. Pages and images are fetched through the
 * outbound guard, so a post cannot make Herald reach a private address, and
 * only the head of a page is read.
 */
import { deadline } from '../../lib/deadline.ts';
import type { OutboundGuard } from '../../lib/outbound.ts';
import { decodeEntities } from '../../lib/html-entities.ts';
import { readAtMost } from '../../lib/bounded-body.ts';

export interface LinkCard {
  uri: string;
  title: string;
  description: string;
  /** The preview image, when the page names one that could be fetched within `maxImageBytes`. */
  image?: { bytes: Buffer; mimeType: string };
}

/** Enough of a page for its <head>. */
const PAGE_BYTES = 512 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
const TEXT_LIMIT = 300;

function clean(text: string | undefined): string {
  const flat = decodeEntities(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > TEXT_LIMIT ? `${flat.slice(0, TEXT_LIMIT - 1)}…` : flat;
}

/**
 * The meta tags of a page (property or name → content), and its <title>. A page
 * is untrusted: every scan here moves forward only, so its cost is linear in the
 * page whatever it holds (a regular expression with an open-ended repeat took
 * 40 s on 512 KB of "<title" repeated, holding the event loop).
 */
export function pageMeta(html: string): { meta: Map<string, string>; title?: string } {
  const meta = new Map<string, string>();
  const opening = /<meta\b/gi;
  for (let found = opening.exec(html); found; found = opening.exec(html)) {
    const start = found.index + found[0].length;
    const end = html.indexOf('>', start);
    if (end === -1) break;
    const attributes = attributesOf(html.slice(start, end));
    const key = (attributes.get('property') ?? attributes.get('name'))?.toLowerCase();
    const content = attributes.get('content');
    if (key && content !== undefined && !meta.has(key)) meta.set(key, content);
    opening.lastIndex = end + 1;
  }
  return { meta, title: titleOf(html) };
}

/** The text of the first <title> element, if it is closed. */
function titleOf(html: string): string | undefined {
  const opening = /<title\b/i.exec(html);
  if (!opening) return undefined;
  const start = html.indexOf('>', opening.index + opening[0].length);
  if (start === -1) return undefined;
  const closing = /<\/title>/gi;
  closing.lastIndex = start + 1;
  const end = closing.exec(html);
  return end ? html.slice(start + 1, end.index) : undefined;
}

/** The attributes of a tag's inside (name=value, quoted or not; later ones win), read in one pass. */
function attributesOf(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  const name = /[a-zA-Z:-]+/g;
  for (let found = name.exec(tag); found; found = name.exec(tag)) {
    let at = found.index + found[0].length;
    while (/\s/.test(tag[at] ?? '')) at++;
    if (tag[at] !== '=') continue;
    at++;
    while (/\s/.test(tag[at] ?? '')) at++;
    const quote = tag[at];
    let value: string;
    if (quote === '"' || quote === "'") {
      const close = tag.indexOf(quote, at + 1);
      if (close === -1) break;
      value = tag.slice(at + 1, close);
      at = close + 1;
    } else {
      const unquoted = /[^\s"'>]+/y;
      unquoted.lastIndex = at;
      const word = unquoted.exec(tag);
      if (!word) continue;
      value = word[0];
      at += value.length;
    }
    attributes.set(found[0].toLowerCase(), value);
    name.lastIndex = at;
  }
  return attributes;
}

async function get(outbound: OutboundGuard, url: string, accept: string, signal: AbortSignal): Promise<Response | undefined> {
  const limit = deadline(FETCH_TIMEOUT_MS, signal);
  try {
    const response = (await outbound.fetch(url, {
      headers: { accept, 'user-agent': 'Herald/1 (link preview)' },
      signal: limit.signal,
      maxRedirects: 5,
    })) as unknown as Response;
    return response.ok ? response : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The card for `uri`, or undefined when the page cannot be read (refused
 * address, no answer, not HTML): a post goes out without a preview then.
 */
export async function linkCard(
  outbound: OutboundGuard,
  uri: string,
  options: { maxImageBytes: number; imageTypes: string[]; signal: AbortSignal },
): Promise<LinkCard | undefined> {
  const page = await get(outbound, uri, 'text/html,application/xhtml+xml', options.signal);
  if (!page || !/html/i.test(page.headers.get('content-type') ?? '')) return undefined;
  const html = (await readAtMost(page.body as AsyncIterable<Uint8Array>, PAGE_BYTES).catch(() => undefined))?.bytes.toString('utf8');
  if (!html) return undefined;
  const { meta, title } = pageMeta(html);
  const card: LinkCard = {
    uri,
    title: clean(meta.get('og:title') ?? meta.get('twitter:title') ?? title) || new URL(uri).host,
    description: clean(meta.get('og:description') ?? meta.get('twitter:description') ?? meta.get('description')),
  };
  const imageUrl = meta.get('og:image') ?? meta.get('og:image:url') ?? meta.get('twitter:image');
  if (imageUrl) {
    let absolute: string | undefined;
    try {
      absolute = new URL(decodeEntities(imageUrl), uri).toString();
    } catch {
      absolute = undefined;
    }
    const image = absolute ? await get(outbound, absolute, options.imageTypes.join(','), options.signal) : undefined;
    const mimeType = image?.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
    if (image && mimeType && options.imageTypes.includes(mimeType)) {
      const read = await readAtMost(image.body as AsyncIterable<Uint8Array>, options.maxImageBytes).catch(() => undefined);
      if (read?.whole) card.image = { bytes: read.bytes, mimeType };
    } else await image?.body?.cancel().catch(() => {});
  }
  return card;
}
