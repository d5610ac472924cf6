/**
 * What a link preview shows of a web page: its title, description and image,
 * read from the page's Open Graph tags (falling back to <title> and the
 * description meta tag). Networks that do not build previews themselves
 * (Bluesky) get them from here. Pages and images are fetched through the
 * outbound guard, so a post cannot make Herald reach a private address, and
 * only the head of a page is read.
 */
import { deadline } from '../lib/deadline.ts';
import type { OutboundGuard } from '../lib/outbound.ts';
import { decodeEntities } from '../lib/html-entities.ts';

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

/** The meta tags of a page (property or name → content), and its <title>. */
export function pageMeta(html: string): { meta: Map<string, string>; title?: string } {
  const meta = new Map<string, string>();
  for (const tag of html.matchAll(/<meta\b([^>]*)>/gi)) {
    const attributes = new Map<string, string>();
    for (const a of tag[1].matchAll(/([a-zA-Z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) attributes.set(a[1].toLowerCase(), a[2] ?? a[3] ?? a[4] ?? '');
    const key = (attributes.get('property') ?? attributes.get('name'))?.toLowerCase();
    const content = attributes.get('content');
    if (key && content !== undefined && !meta.has(key)) meta.set(key, content);
  }
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  return { meta, title };
}

/** Reads at most `limit` bytes of a response body; undefined when it is longer and `whole` is required. */
async function readUpTo(response: Response, limit: number, whole: boolean): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
    if (size >= limit) {
      await response.body?.cancel().catch(() => {});
      if (whole) return undefined;
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit);
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
  const html = (await readUpTo(page, PAGE_BYTES, false).catch(() => undefined))?.toString('utf8');
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
      const bytes = await readUpTo(image, options.maxImageBytes + 1, true).catch(() => undefined);
      if (bytes && bytes.length <= options.maxImageBytes) card.image = { bytes, mimeType };
    } else await image?.body?.cancel().catch(() => {});
  }
  return card;
}
