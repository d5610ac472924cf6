/** Analytics as the networks report them, read through the same cache as GET /analytics. */
import { z } from 'zod';
import { analyticsQuery, idParam } from '../../contract/index.ts';
import { defineTool } from './tool.ts';

const days = analyticsQuery.shape.date;

export const channelAnalytics = defineTool({
  name: 'channel_analytics',
  title: 'Channel analytics',
  description: [
    "The channel's figures as its network reports them (followers, impressions, likes... whatever the network has) for the last `date` days:",
    'a series per figure with its total per day and its change in percent. Networks without an analytics API answer an error saying so.',
  ].join(' '),
  scope: 'analytics:read',
  input: z.object({ id: idParam.shape.id.describe('The channel id, from list_channels'), date: days }).strict(),
  hints: { readOnly: true, openWorld: true },
  async run({ id, date }, { services, principal }) {
    return { analytics: await services.reads.channelAnalytics(principal.accountId, id, date) };
  },
});

export const postAnalytics = defineTool({
  name: 'post_analytics',
  title: 'Post analytics',
  description: [
    'The figures of one published post as its network reports them (impressions, likes, replies...) for the last `date` days.',
    'The post must be published (state PUBLISHED in get_post); networks without an analytics API answer an error saying so.',
  ].join(' '),
  scope: 'analytics:read',
  input: z.object({ id: idParam.shape.id.describe('The post id (from create_post or list_posts)'), date: days }).strict(),
  hints: { readOnly: true, openWorld: true },
  async run({ id, date }, { services, principal }) {
    return { analytics: await services.reads.postAnalytics(principal.accountId, id, date) };
  },
});
