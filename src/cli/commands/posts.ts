/** Creating, listing, reading, deleting and retrying posts. */
import type { CreatedPost, CreatePostsInput, Media, PostDetail } from '../../sdk/index.ts';
import type { Command, Invocation } from '../command.ts';
import { flag, list, parseJsonObject, parseUserDate, positional, str, UsageError } from '../command.ts';
import { excerpt, localDate, table, type Styles } from '../output.ts';
import { clientFor, requireSession } from '../session.ts';
import { uploadFile } from './upload.ts';

interface Item {
  content: string;
  media: string[];
  delay?: number;
}

/**
 * The thread in the order typed: each --content starts an item, and --media and
 * --delay belong to the item before them (media typed before any --content go
 * to the first item).
 */
function threadFrom(invocation: Invocation): Item[] {
  const items: Item[] = [];
  const early: string[] = [];
  for (const token of invocation.tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    if (token.name === 'content') {
      items.push({ content: token.value, media: items.length === 0 ? early : [] });
    } else if (token.name === 'media') {
      (items.length === 0 ? early : items[items.length - 1].media).push(token.value);
    } else if (token.name === 'delay') {
      if (items.length < 2) throw new UsageError('--delay goes after the --content of a reply (the second item or later)');
      const minutes = Number(token.value);
      if (!Number.isInteger(minutes) || minutes < 0) throw new UsageError(`--delay must be whole minutes, got "${token.value}"`);
      items[items.length - 1].delay = minutes;
    }
  }
  if (items.length === 0) throw new UsageError('give the text with --content (repeat --content for the replies of a thread)');
  return items;
}

/** A --setting value is JSON when it parses (true, 3, ["a"]), text otherwise. */
function settingsFrom(invocation: Invocation): Record<string, unknown> | undefined {
  const json = str(invocation, 'settings');
  const settings: Record<string, unknown> = json ? parseJsonObject(json, '--settings') : {};
  for (const pair of (invocation.values.setting as string[] | undefined) ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--setting takes key=value, got "${pair}"`);
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Plain text.
    }
    settings[pair.slice(0, at)] = value;
  }
  return Object.keys(settings).length > 0 ? settings : undefined;
}

type When = { type: 'draft' | 'now' | 'schedule'; date?: string; nextSlot?: boolean };

function whenFrom(invocation: Invocation): When {
  const at = str(invocation, 'at');
  const chosen = [flag(invocation, 'draft') && 'draft', flag(invocation, 'now') && 'now', at && 'at', flag(invocation, 'next-slot') && 'next-slot'].filter(
    Boolean,
  );
  if (chosen.length === 0) throw new UsageError('say when: --now, --at <date>, --next-slot, or --draft');
  const date = at ? parseUserDate(at, '--at') : undefined;
  if (flag(invocation, 'draft')) {
    if (flag(invocation, 'now') || flag(invocation, 'next-slot')) throw new UsageError('--draft goes alone or with --at');
    return { type: 'draft', date };
  }
  if (chosen.length > 1) throw new UsageError(`choose one of --now, --at and --next-slot (got ${chosen.map((c) => `--${c}`).join(', ')})`);
  if (flag(invocation, 'now')) return { type: 'now' };
  if (flag(invocation, 'next-slot')) return { type: 'schedule', nextSlot: true };
  return { type: 'schedule', date };
}

const create: Command = {
  name: 'posts create',
  summary: 'create a post on one or more channels: now, at a date, at the next slot, or as a draft',
  help: `Usage: herald posts create --channel ID [--channel ID ...] --content TEXT [--media FILE ...]
                           [--content REPLY [--delay MIN] [--media FILE] ...]
                           (--now | --at DATE | --next-slot | --draft [--at DATE])
                           [--settings JSON] [--setting KEY=VALUE ...] [--tag T ...]
                           [--short-link] [--idempotency-key KEY]

Each --content is one item of the thread: the first is the post, the next ones
are replies. --media and --delay (minutes after the previous item) belong to
the --content before them. Media files are uploaded first. One request covers
every channel.

When:
  --now            publish at once
  --at DATE        schedule: "2026-12-01 09:00" is local time; ISO 8601 with Z or an offset is taken as is
  --next-slot      schedule at each channel's next free posting time
  --draft          keep as a draft (optionally dated with --at)

Options:
  -i, --channel ID        a target channel (repeat, or a,b)
  -c, --content TEXT      the text of an item
  -m, --media FILE        a file to attach to the item before it
  --delay MIN             minutes after the previous item (replies)
  --settings JSON         provider settings, e.g. '{"__type":"x","who_can_reply_post":"everyone"}'
  --setting KEY=VALUE     one provider setting (the value is JSON when it parses)
  --tag T                 a tag (repeat)
  --short-link            shorten the links in the text
  --idempotency-key KEY   a repeat with the same key creates nothing new
  --json                  the API's answer as JSON

Examples:
  herald posts create -i ch_1 -c "Hello world" --now
  herald posts create -i ch_1,ch_2 -c "Launch day" -m ./banner.png --at "2026-12-01 09:00"
  herald posts create -i ch_1 -c "A thread" -c "second part" --delay 5 -c "third" --next-slot
  herald posts create -i ch_1 -c "Later" --draft --setting who_can_reply_post=everyone`,
  options: {
    channel: { type: 'string', short: 'i', multiple: true },
    content: { type: 'string', short: 'c', multiple: true },
    media: { type: 'string', short: 'm', multiple: true },
    delay: { type: 'string', multiple: true },
    settings: { type: 'string' },
    setting: { type: 'string', multiple: true },
    tag: { type: 'string', multiple: true },
    draft: { type: 'boolean' },
    now: { type: 'boolean' },
    at: { type: 'string' },
    'next-slot': { type: 'boolean' },
    'short-link': { type: 'boolean' },
    'idempotency-key': { type: 'string' },
  },
  async run(invocation) {
    const { out, config } = invocation;
    const channels = list(invocation, 'channel');
    if (channels.length === 0) throw new UsageError('give at least one --channel (ids: herald channels list)');
    const thread = threadFrom(invocation);
    const settings = settingsFrom(invocation);
    const when = whenFrom(invocation);
    const idempotencyKey = str(invocation, 'idempotency-key');
    const client = clientFor(requireSession(config));

    // Each file once, even when several items attach it; a repeated command with the same key re-uploads nothing.
    const uploaded = new Map<string, Media>();
    for (const file of thread.flatMap((item) => item.media)) {
      if (!uploaded.has(file)) uploaded.set(file, await uploadFile(client, out, file, idempotencyKey && `${idempotencyKey}:media:${uploaded.size}`));
    }
    const value = thread.map((item) => ({
      content: item.content,
      image: item.media.map((file) => ({ id: uploaded.get(file)!.id, path: uploaded.get(file)!.path })),
      ...(item.delay !== undefined ? { delay: item.delay } : {}),
    }));
    const entry = (channel: string) => ({ integration: { id: channel }, value, ...(settings ? { settings } : {}) });

    // One request per distinct date: usually one; --next-slot may give channels different times.
    const byDate = new Map<string, string[]>();
    for (const channel of channels) {
      const date = when.nextSlot ? (await client.findSlot(channel)).date : (when.date ?? new Date().toISOString());
      byDate.set(date, [...(byDate.get(date) ?? []), channel]);
    }
    const created: (CreatedPost & { date: string })[] = [];
    let part = 0;
    for (const [date, group] of byDate) {
      const body: CreatePostsInput = {
        type: when.type,
        date,
        shortLink: flag(invocation, 'short-link'),
        tags: list(invocation, 'tag'),
        posts: group.map(entry),
      };
      const key = idempotencyKey && (byDate.size > 1 ? `${idempotencyKey}:${part}` : idempotencyKey);
      part += 1;
      for (const post of await client.post(body, { idempotencyKey: key })) created.push({ ...post, date });
    }
    const verb = when.type === 'draft' ? 'Saved as draft' : when.type === 'now' ? 'Publishing now' : 'Scheduled';
    out.result(created, (rows) =>
      [
        `${verb}: ${rows.length} post${rows.length === 1 ? '' : 's'}`,
        table(
          ['POST', 'CHANNEL', 'DATE'],
          rows.map((p) => [p.postId, p.integration, when.type === 'now' ? 'now' : localDate(p.date)]),
          out.style,
        ),
      ].join('\n'),
    );
  },
};

function stateColour(state: string, style: Styles): string {
  if (state === 'PUBLISHED') return style.green(state);
  if (state === 'ERROR') return style.red(state);
  if (state === 'DRAFT') return style.dim(state);
  return style.yellow(state);
}

const DAY = 86_400_000;

const listPosts: Command = {
  name: 'posts list',
  summary: 'posts in a date range (default: 7 days back to 30 days ahead)',
  help: `Usage: herald posts list [--from DATE] [--to DATE] [--customer ID]

Lists posts (the first item of each thread) whose time is in the range.
Dates without an offset are local time.

Options:
  --from DATE     start (default: 7 days ago)
  --to DATE       end (default: 30 days from now)
  --customer ID   only one customer's posts
  --json          the API's answer as JSON

Examples:
  herald posts list
  herald posts list --from 2026-12-01 --to 2026-12-31 --json`,
  options: { from: { type: 'string' }, to: { type: 'string' }, customer: { type: 'string' } },
  async run(invocation) {
    const { out, config } = invocation;
    const from = str(invocation, 'from');
    const to = str(invocation, 'to');
    const startDate = from ? parseUserDate(from, '--from') : new Date(Date.now() - 7 * DAY).toISOString();
    const endDate = to ? parseUserDate(to, '--to') : new Date(Date.now() + 30 * DAY).toISOString();
    const answer = await clientFor(requireSession(config)).postList({ startDate, endDate, customer: str(invocation, 'customer') });
    out.result(answer, ({ posts }) =>
      posts.length === 0
        ? `No posts between ${localDate(startDate)} and ${localDate(endDate)}.`
        : table(
            ['ID', 'DATE', 'STATE', 'CHANNEL', 'CONTENT'],
            posts.map((p) => [p.id, localDate(p.publishDate), stateColour(p.state, out.style), p.integration.name, excerpt(p.content)]),
            out.style,
          ),
    );
  },
};

function describePost(post: PostDetail, style: Styles): string {
  const lines = [
    `${style.bold(post.id)}  ${stateColour(post.state, style)}  ${localDate(post.publishDate)}`,
    `Channel:  ${post.integration.name} (${post.integration.providerIdentifier}, ${post.integration.id})`,
    `Group:    ${post.group}`,
    ...(post.releaseURL ? [`Released: ${post.releaseURL}`] : []),
    ...(post.error ? [`Error:    ${style.red(post.error)}`] : []),
    ...(post.warning ? [`Warning:  ${style.yellow(post.warning)}`] : []),
    '',
  ];
  post.thread.forEach((item, i) => {
    lines.push(`${i + 1}. ${stateColour(item.state, style)}${item.delay ? `  +${item.delay} min` : ''}  ${localDate(item.publishDate)}`);
    lines.push(...item.content.split('\n').map((l) => `   ${l}`));
    for (const media of item.image) lines.push(`   [media] ${media.path}`);
    if (item.error) lines.push(`   ${style.red(`error: ${item.error}`)}`);
    if (item.attempts.length > 0)
      lines.push(
        style.dim(`   ${item.attempts.length} attempt${item.attempts.length === 1 ? '' : 's'}, last: ${item.attempts[item.attempts.length - 1].outcome}`),
      );
  });
  return lines.join('\n');
}

const get: Command = {
  name: 'posts get',
  summary: 'one post with its whole thread, per-item state and errors',
  help: `Usage: herald posts get <post-id>

Example:
  herald posts get p_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the post id');
    const post = await clientFor(requireSession(invocation.config)).getPost(id);
    invocation.out.result(post, (p) => describePost(p, invocation.out.style));
  },
};

const remove: Command = {
  name: 'posts delete',
  summary: "delete a post's group (the post and its thread)",
  help: `Usage: herald posts delete <post-id>

Example:
  herald posts delete p_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the post id');
    const answer = await clientFor(requireSession(invocation.config)).deletePost(id);
    invocation.out.result(answer, (a) => `Deleted post ${a.id} (group ${a.group}).`);
  },
};

const retry: Command = {
  name: 'posts retry',
  summary: 'put the failed items of a post back in the queue',
  help: `Usage: herald posts retry <post-id>

Example:
  herald posts retry p_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the post id');
    const post: PostDetail = await clientFor(requireSession(invocation.config)).retryPost(id);
    invocation.out.result(post, (p) => `Queued again.\n\n${describePost(p, invocation.out.style)}`);
  },
};

export const postCommands = [create, listPosts, get, remove, retry];
