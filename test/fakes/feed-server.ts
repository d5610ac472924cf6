/**
 * A local web site publishing RSS and Atom feeds, as a blog does: items are
 * added as the test goes, each change gets a new ETag, a request carrying the
 * current ETag (If-None-Match) or a date not older than the last change
 * (If-Modified-Since) is answered 304, and a feed can be made to answer 500,
 * malformed XML or a dropped connection. Every request is logged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FeedItemInput {
  guid?: string;
  title: string;
  link?: string;
  description?: string;
  /** An image URL, sent as an enclosure (RSS) or a link rel="enclosure" (Atom). */
  image?: string;
  published?: Date;
}

export type FeedAnswer = 'feed' | 'error500' | 'malformed' | 'drop';

interface FeedState {
  format: 'rss' | 'atom';
  title: string;
  items: FeedItemInput[];
  version: number;
  changedAt: Date;
  answer: FeedAnswer;
}

export interface FeedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The answer's status; 0 for a dropped connection. */
  status: number;
  /** When it arrived (epoch ms). */
  at: number;
}

export interface FeedServer {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: FeedRequest[];
  /** Starts the feed at `path` (e.g. "/blog.xml"), or replaces its items with a new version. */
  publish(path: string, options: { format?: 'rss' | 'atom'; title?: string; items?: FeedItemInput[] }): string;
  /** Adds items at the top (newest first, as feeds list them): a new version, a new ETag. */
  add(path: string, ...items: FeedItemInput[]): void;
  /** A new version without new items (a feed rebuilt with the same content). */
  touch(path: string): void;
  answer(path: string, answer: FeedAnswer): void;
  /** Requests made for `path`. */
  hits(path: string): FeedRequest[];
  /** Files served as they are (images). */
  file(path: string, type: string, bytes: Buffer): string;
  close(): Promise<void>;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function rss(state: FeedState): string {
  const items = state.items.map(
    (i) => `<item>
      <title>${escapeXml(i.title)}</title>
      ${i.link ? `<link>${escapeXml(i.link)}</link>` : ''}
      ${i.guid ? `<guid isPermaLink="false">${escapeXml(i.guid)}</guid>` : ''}
      ${i.description !== undefined ? `<description>${escapeXml(i.description)}</description>` : ''}
      ${i.image ? `<enclosure url="${escapeXml(i.image)}" type="image/png" length="100"/>` : ''}
      ${i.published ? `<pubDate>${i.published.toUTCString()}</pubDate>` : ''}
    </item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>${escapeXml(state.title)}</title><link>http://blog.example/</link><description>A blog</description>
${items.join('\n')}
</channel></rss>`;
}

function atom(state: FeedState): string {
  const entries = state.items.map(
    (i) => `<entry>
      <title>${escapeXml(i.title)}</title>
      <id>${escapeXml(i.guid ?? i.link ?? i.title)}</id>
      ${i.link ? `<link rel="alternate" href="${escapeXml(i.link)}"/>` : ''}
      ${i.image ? `<link rel="enclosure" type="image/png" href="${escapeXml(i.image)}"/>` : ''}
      ${i.description !== undefined ? `<summary type="html">${escapeXml(i.description)}</summary>` : ''}
      <updated>${(i.published ?? state.changedAt).toISOString()}</updated>
    </entry>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>${escapeXml(state.title)}</title><id>urn:blog</id><updated>${state.changedAt.toISOString()}</updated>
${entries.join('\n')}
</feed>`;
}

export async function startFeedServer(): Promise<FeedServer> {
  const feeds = new Map<string, FeedState>();
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const requests: FeedRequest[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const at = Date.now();
    const log = (status: number) => requests.push({ path, headers: req.headers, status, at });
    const file = files.get(path);
    if (file) {
      log(200);
      res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.bytes.length) });
      res.end(file.bytes);
      return;
    }
    const state = feeds.get(path);
    if (!state) {
      log(404);
      res.writeHead(404).end('not found');
      return;
    }
    if (state.answer === 'drop') {
      log(0);
      req.socket.destroy();
      return;
    }
    if (state.answer === 'error500') {
      log(500);
      res.writeHead(500, { 'content-type': 'text/plain' }).end('the blog is down');
      return;
    }
    if (state.answer === 'malformed') {
      log(200);
      res.writeHead(200, { 'content-type': 'application/rss+xml' }).end('<?xml version="1.0"?><rss version="2.0"><channel><title>Broken</ti');
      return;
    }
    const etag = `"v${state.version}"`;
    // Dates in HTTP have whole seconds: a change within the same second is still "modified".
    const since = Date.parse(String(req.headers['if-modified-since'] ?? ''));
    const unchangedSince = Number.isFinite(since) && Math.floor(state.changedAt.getTime() / 1000) * 1000 <= since;
    if (req.headers['if-none-match'] === etag || (req.headers['if-none-match'] === undefined && unchangedSince)) {
      log(304);
      res.writeHead(304, { etag }).end();
      return;
    }
    log(200);
    const body = state.format === 'rss' ? rss(state) : atom(state);
    res.writeHead(200, {
      'content-type': state.format === 'rss' ? 'application/rss+xml; charset=utf-8' : 'application/atom+xml; charset=utf-8',
      etag,
      'last-modified': state.changedAt.toUTCString(),
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const feed = (path: string) => {
    const state = feeds.get(path);
    if (!state) throw new Error(`no feed at ${path}`);
    return state;
  };
  const changed = (state: FeedState) => {
    state.version++;
    // A second later than the last change at least, so Last-Modified moves too.
    state.changedAt = new Date(Math.max(Date.now(), state.changedAt.getTime() + 1000));
  };
  return {
    url,
    requests,
    publish(path, options) {
      feeds.set(path, {
        format: options.format ?? 'rss',
        title: options.title ?? 'A blog',
        items: [...(options.items ?? [])],
        // Published again: a new version of the same feed, with a new ETag.
        version: (feeds.get(path)?.version ?? 0) + 1,
        changedAt: new Date(),
        answer: 'feed',
      });
      return url + path;
    },
    add(path, ...items) {
      const state = feed(path);
      state.items.unshift(...items.reverse());
      changed(state);
    },
    touch(path) {
      changed(feed(path));
    },
    answer(path, answer) {
      feed(path).answer = answer;
    },
    hits: (path) => requests.filter((r) => r.path === path),
    file(path, type, bytes) {
      files.set(path, { type, bytes });
      return url + path;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
