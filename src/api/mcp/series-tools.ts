/**
 * Tools about repeating posts: list, create, read, change, stop. Each calls the
 * Series service /series calls, with the same checks and scopes (a series is
 * posts: posts:read and posts:write); the arguments are the contract's own.
 */
import { z } from 'zod';
import { idParam, repeatRuleBody, seriesBody, type SeriesBody } from '../../contract/index.ts';
import { idempotencyKeyArgument, underIdempotencyKey } from './idempotency.ts';
import { defineTool } from './tool.ts';

const seriesId = idParam.shape.id.describe('The series id (id from create_series or list_series)');

const EXAMPLE_RULE = '{"start": "2026-12-07T09:00:00+01:00", "unit": "week", "weekdays": ["mon"], "timezone": "Europe/Berlin", "count": 10}';

const repeat = repeatRuleBody.describe(
  'When the post repeats. Every "every" days ("unit": "day") or weeks ("unit": "week", on "weekdays", by default the weekday of "start"), ' +
    'from "start" (an ISO 8601 date-time; every occurrence keeps its time of day in "timezone", across daylight-saving changes), ' +
    `until a date ("until": "2027-03-31", that whole day counts) or "count" times, or with neither for no end. E.g. ${EXAMPLE_RULE}`,
);
const posts = seriesBody.shape.posts.describe(
  'The post to repeat, as create_post takes it: one entry per channel, {"integration": {"id": <channel id from list_channels>}, ' +
    '"value": [{"content": <text>, "image": [{"id", "path"}]}, <later items: its thread>], "settings": {...}}',
);

export const listSeries = defineTool({
  name: 'list_series',
  title: 'List repeating posts',
  description: [
    "Lists this account's repeating posts, newest first: for each its id, name, rule (repeat), the post it repeats (posts),",
    'state ("active", or "ended" when no occurrence is left), upcoming (its next occurrence times) and lastError',
    '(why the last occurrence could not be created). get_series shows one with its occurrences and their posts.',
  ].join(' '),
  scope: 'posts:read',
  input: z.object({}).strict(),
  hints: { readOnly: true },
  async run(_args, { services, principal }) {
    return { series: await services.series.list(principal.accountId) };
  },
});

export const createSeries = defineTool({
  name: 'create_series',
  title: 'Create a repeating post',
  description: [
    'Creates a post that repeats on its channels: every N days or weeks, or on chosen weekdays, until a date or for a number of times.',
    `Example: {"name": "Monday tip", "repeat": ${EXAMPLE_RULE},`,
    '"posts": [{"integration": {"id": "<channel id>"}, "value": [{"content": "Tip of the week"}]}]}.',
    'The post is checked as create_post checks it, at its first occurrence; when a check fails nothing is created and the error names',
    'the field (e.g. repeat.timezone, posts.0.value.0.content). Each call counts once against the hourly posting allowance create_post counts',
    'against, however many occurrences it makes. Each occurrence becomes an ordinary post (with seriesId) ahead of time:',
    "those due within the next 14 days, and always the next one, are created by Herald's engine moments after this call. Answers the series",
    '(id, the rule as stored, upcoming: its next occurrence times); see the occurrences and their posts with get_series or list_posts.',
  ].join(' '),
  scope: 'posts:write',
  input: seriesBody
    .extend({
      name: seriesBody.shape.name.describe('Optional. A name for the series, shown in Herald, e.g. "Monday tip"'),
      repeat,
      posts,
      idempotency_key: idempotencyKeyArgument,
    })
    .strict(),
  hints: { readOnly: false },
  async run({ idempotency_key, ...args }, { services, principal }) {
    const { accountId, userId } = principal;
    // A member's occurrences wait for approval as their posts do (an OAuth token of theirs carries the person).
    return underIdempotencyKey(services, accountId, idempotency_key, 'MCP create_series', args, () => services.series.create(accountId, args, userId));
  },
});

export const getSeries = defineTool({
  name: 'get_series',
  title: 'Get a repeating post',
  description: [
    'One repeating post: its rule, the post it repeats, upcoming times, lastError, and its latest occurrences (up to 100, in time order),',
    'each with its time, its posts (id, channel, state QUEUE/PUBLISHED/ERROR/DRAFT, publishDate) and "detached" (changed on its own:',
    "update_series leaves it as it is). Follow an occurrence's post with get_post; change the series with update_series.",
  ].join(' '),
  scope: 'posts:read',
  input: z.object({ id: seriesId }).strict(),
  hints: { readOnly: true },
  async run({ id }, { services, principal }) {
    return services.series.get(principal.accountId, id);
  },
});

export const updateSeries = defineTool({
  name: 'update_series',
  title: 'Change a repeating post',
  description: [
    'Changes a repeating post: only the arguments sent change; "repeat" and "posts", when sent, replace the whole rule or post',
    '(get_series shows the current ones). E.g. {"id": "<series id>", "posts": [{"integration": {"id": "<channel id>"}, "value": [{"content": "New text"}]}]}',
    `or {"id": "<series id>", "repeat": ${EXAMPLE_RULE}}. Occurrences still to come are made again from the new rule and post, except those`,
    'changed on their own (detached); published occurrences are kept. Checked as create_series is. Answers the series as get_series does.',
  ].join(' '),
  scope: 'posts:write',
  input: z
    .object({
      id: seriesId,
      // The contract's name before it turns null into "no name": here null removes the name, leaving it out keeps it.
      name: seriesBody.shape.name.in.describe('A new name; null removes the name'),
      repeat: repeat.optional(),
      posts: posts.optional(),
      tags: seriesBody.shape.tags.unwrap().describe('The tags of each occurrence; they replace the current ones'),
      shortLink: seriesBody.shape.shortLink.unwrap().describe("Replace the links in the text by this server's short links, which count clicks"),
    })
    .strict(),
  hints: { readOnly: false },
  async run({ id, name, ...changes }, { services, principal }) {
    const { accountId, userId } = principal;
    const current = await services.series.get(accountId, id);
    // What GET /series/{id} answers is a valid body as it is: the parts not sent are kept from it.
    const kept = seriesBody.parse({ name: current.name, repeat: current.repeat, shortLink: current.shortLink, tags: current.tags, posts: current.posts });
    const body: SeriesBody = {
      name: name === undefined ? kept.name : (name ?? undefined),
      repeat: changes.repeat ?? kept.repeat,
      posts: changes.posts ?? kept.posts,
      tags: changes.tags ?? kept.tags,
      shortLink: changes.shortLink ?? kept.shortLink,
    };
    return services.series.update(accountId, id, body, userId);
  },
});

export const deleteSeries = defineTool({
  name: 'delete_series',
  title: 'Stop a repeating post',
  description: [
    'Stops a repeating post: no occurrence is created any more, and the posts of its occurrences still to come are deleted',
    '(their ids in removedPosts). Published occurrences are kept, on the networks and in Herald, and so are failed ones.',
    'To skip a single occurrence instead, delete its post with delete_post (get_series lists them).',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: seriesId }).strict(),
  hints: { readOnly: false, destructive: true, idempotent: true },
  async run({ id }, { services, principal }) {
    const removedPosts = await services.series.remove(principal.accountId, id);
    return { deleted: true, id, removedPosts, kept: 'Published occurrences stay published, on the networks and in Herald.' };
  },
});
