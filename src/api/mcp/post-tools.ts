/**
 * Tools about posts: create (now, at a time, at the next free slot, as a draft;
 * several channels; threads), list a range, read one, delete, retry. Each calls
 * the domain services POST/GET/DELETE /posts call, with the same checks.
 */
import { z } from 'zod';
import { createPostsBody, idParam, listPostsQuery, type CreatePostsBody } from '../../contract/index.ts';
import { ApiError, invalidField } from '../../domain/errors.ts';
import type { PostPlan } from '../../domain/posts/posts.ts';
import { iso } from '../../lib/time.ts';
import type { Services } from '../../services.ts';
import type { Principal } from '../../domain/accounts.ts';
import { idempotencyKeyArgument, underIdempotencyKey } from './idempotency.ts';
import { defineTool } from './tool.ts';

const postId = idParam.shape.id.describe('The post id (postId from create_post, id from list_posts)');

const createInput = z
  .object({
    when: z
      .enum(['now', 'at', 'next_slot', 'draft'])
      .describe(
        '"now": publish at once. "at": publish at "date". "next_slot": each channel at its next free posting time (see find_next_slot). ' +
          '"draft": keep it unpublished (a person or a later call schedules it); "date" is optional then.',
      ),
    date: createPostsBody.shape.date.describe(
      'With "when": "at" (required) or "draft" (optional): an ISO 8601 date-time with Z or an offset, e.g. 2026-12-01T09:00:00Z. Leave it out otherwise.',
    ),
    posts: createPostsBody.shape.posts.describe(
      'One entry per channel: {"integration": {"id": <channel id>}, "value": [<thread items>], "settings": {...}}. ' +
        'value[0] is the post, later items its thread (replies); each item is {"content": <text>, "image": [{"id", "path"}], "delay": <minutes after the previous item>}.',
    ),
    tags: createPostsBody.shape.tags,
    shortLink: createPostsBody.shape.shortLink.describe("Replace the links in the text by this server's short links, which count clicks"),
    idempotency_key: idempotencyKeyArgument,
  })
  .strict();

type CreateArgs = Omit<z.output<typeof createInput>, 'idempotency_key'>;
type Entry = CreatePostsBody['posts'][number];

export const createPost = defineTool({
  name: 'create_post',
  title: 'Create a post',
  description: [
    "Creates a post on one or more channels: publishes it now, schedules it at a time or at each channel's next free slot, or keeps it as a draft.",
    'Example: {"when": "at", "date": "2026-12-01T09:00:00Z", "posts": [{"integration": {"id": "<channel id>"},',
    '"value": [{"content": "Hello"}, {"content": "A reply", "delay": 5}]}]}.',
    "Channel ids, each network's limits and its settings schema come from list_channels; put the same text in one entry per channel to post it",
    'everywhere. Media must be uploaded first (upload_media_from_url) and referenced by its id and path.',
    "Every entry is checked against its network's rules before anything is stored: when one check fails nothing is created and the error names",
    "the field (e.g. posts.0.value.1.content) and the rule. Each call counts once against the account's hourly posting allowance, as POST /posts",
    'does: send several channels in one call rather than one call each. Answers one created post per entry (postId, channel, publishDate, state);',
    'a post that must wait for an owner\'s or admin\'s approval answers "state": "DRAFT" with "approval": "pending". Follow a post with get_post.',
  ].join(' '),
  scope: 'posts:write',
  input: createInput,
  hints: { readOnly: false },
  async run({ idempotency_key, ...args }, { services, principal }) {
    if (args.when === 'at' && args.date === undefined) {
      throw invalidField('date', 'is required when "when" is "at": an ISO 8601 date-time such as 2026-12-01T09:00:00Z');
    }
    if ((args.when === 'now' || args.when === 'next_slot') && args.date !== undefined) {
      throw invalidField('date', `must be left out when "when" is "${args.when}"; to choose the time, send "when": "at" with the date`);
    }
    return underIdempotencyKey(services, principal.accountId, idempotency_key, 'MCP create_post', args, () => create(services, principal, args));
  },
});

/** Entries that go out at one time (one plan, as one POST /posts would be), by their index in the call. */
interface Batch {
  date: number | undefined;
  indexes: number[];
}

async function create(services: Services, principal: Principal, args: CreateArgs): Promise<Record<string, unknown>> {
  const { accountId } = principal;
  const type = args.when === 'draft' ? 'draft' : args.when === 'now' ? 'now' : 'schedule';
  const batches = args.when === 'next_slot' ? await bySlot(services, accountId, args.posts) : [{ date: args.date, indexes: args.posts.map((_, i) => i) }];
  // Every entry is checked before anything is stored or counted.
  const plans: PostPlan[] = [];
  for (const batch of batches) {
    const body: CreatePostsBody = { ...args, type, date: batch.date, posts: batch.indexes.map((i) => args.posts[i]), creationMethod: 'mcp' };
    // A member's posts (an OAuth token of theirs) wait for approval as on the public API.
    plans.push(
      await services.posts
        .plan(accountId, body, undefined, { author: principal.userId })
        .catch((err: unknown) => Promise.reject(renumbered(err, batch.indexes))),
    );
  }
  const stored = await services.posts.create(accountId, plans);
  const created: { index: number; postId: string; channel: string; publishDate: string; state: string; approval?: string; warning?: string }[] = [];
  for (const [b, plan] of plans.entries()) {
    const ids = stored[b];
    // A gated author's post is stored waiting (DRAFT, approval pending), not queued.
    const { state, approval } = services.approvals.forNewThread(type, plan.gated ?? false);
    for (const [k, { postId, integration }] of ids.entries()) {
      const warning = plan.threads[k]?.warning;
      created.push({
        index: batches[b].indexes[k],
        postId,
        channel: integration,
        publishDate: iso(plan.publishAt),
        state,
        ...(approval ? { approval } : {}),
        ...(warning ? { warning } : {}),
      });
    }
  }
  created.sort((a, b) => a.index - b.index);
  return { posts: created.map(({ index: _index, ...post }) => post) };
}

/** Groups the entries by their channel's next free slot. */
async function bySlot(services: Services, accountId: string, entries: Entry[]): Promise<Batch[]> {
  const batches = new Map<number, number[]>();
  for (const [i, entry] of entries.entries()) {
    const at = await services.channels.findSlot(accountId, entry.integration.id).catch((err: unknown) => {
      if (!(err instanceof ApiError) || err.code !== 'not_found') throw err;
      const path = `posts.${i}.integration.id`;
      throw new ApiError('not_found', `${path}: ${err.message}`, [{ path, message: err.message }]);
    });
    batches.set(at, [...(batches.get(at) ?? []), i]);
  }
  return [...batches].map(([date, indexes]) => ({ date, indexes }));
}

/** A plan of some of the entries names them by their place in the plan: named back by their place in the call. */
function renumbered(err: unknown, indexes: number[]): unknown {
  if (!(err instanceof ApiError) || indexes.every((index, i) => index === i)) return err;
  const fix = (text: string) =>
    text.replace(/\bposts\.(\d+)/g, (whole, n: string) => (indexes[Number(n)] === undefined ? whole : `posts.${indexes[Number(n)]}`));
  return new ApiError(
    err.code,
    fix(err.message),
    err.errors.map((e) => ({ path: fix(e.path), message: e.message })),
    err.headers,
  );
}

export const listPosts = defineTool({
  name: 'list_posts',
  title: 'List posts',
  description: [
    'Lists the posts whose publishing time is between startDate and endDate, oldest first: for each, the first item of its thread with its channel,',
    'state (QUEUE: waiting or being sent, PUBLISHED, ERROR: failed, see "error"; DRAFT), publishDate, releaseURL (the post on the network) and tags.',
    "Use get_post for a whole thread with each item's state, errors and attempts.",
  ].join(' '),
  scope: 'posts:read',
  input: z
    .object({
      startDate: listPostsQuery.shape.startDate.describe('Start of the range: an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z'),
      endDate: listPostsQuery.shape.endDate.describe('End of the range (included): an ISO 8601 date-time, e.g. 2026-12-08T00:00:00Z'),
      customer: listPostsQuery.shape.customer.describe("Only the posts of this customer's channels (a customer id)"),
    })
    .strict(),
  hints: { readOnly: true },
  async run({ startDate, endDate, customer }, { services, principal }) {
    if (endDate < startDate) throw invalidField('endDate', 'must not be before startDate');
    return { posts: JSON.parse(await services.posts.listJson(principal.accountId, startDate, endDate, customer)) };
  },
});

export const getPost = defineTool({
  name: 'get_post',
  title: 'Get a post',
  description: [
    'One post with its whole thread: for each item its state (QUEUE, PUBLISHED, ERROR, DRAFT), publishDate, releaseURL on the network, error',
    'and every publishing attempt with its outcome. Use it to follow a post after create_post and to learn why one failed;',
    'retry_post sends the failed items again.',
  ].join(' '),
  scope: 'posts:read',
  input: z.object({ id: postId }).strict(),
  hints: { readOnly: true },
  async run({ id }, { services, principal }) {
    return services.posts.detail(principal.accountId, id);
  },
});

export const deletePost = defineTool({
  name: 'delete_post',
  title: 'Delete a post',
  description: [
    "Deletes a post with its whole thread on its channel (other channels' copies of the same text are posts of their own).",
    'A post waiting in the queue will not go out. Refused while the post is being sent; a post already published stays on the network.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId }).strict(),
  hints: { readOnly: false, destructive: true, idempotent: true },
  async run({ id }, { services, principal }) {
    return { deleted: true, ...(await services.posts.deletePost(principal.accountId, id)) };
  },
});

export const retryPost = defineTool({
  name: 'retry_post',
  title: 'Retry a failed post',
  description: [
    'Puts the failed items (state ERROR) of a post back in the queue, due now, and answers the post as get_post does.',
    'Read the error first (get_post): a post refused for its content fails again unless it is changed; refused when nothing failed.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId }).strict(),
  hints: { readOnly: false },
  async run({ id }, { services, principal }) {
    return services.posts.retry(principal.accountId, id);
  },
});
