/** Tools about channels: what there is to post to, with each network's rules, and when a channel is free next. */
import { z } from 'zod';
import { idParam } from '../../contract/index.ts';
import { iso } from '../../lib/time.ts';
import { networkCatalogue, type NetworkDescription } from '../../providers/catalogue.ts';
import type { Services } from '../../services.ts';
import { defineTool } from './tool.ts';

/** The catalogue changes only with the server's code and settings: built once per server. */
const catalogues = new WeakMap<Services, Map<string, NetworkDescription>>();

function catalogueOf(services: Services): Map<string, NetworkDescription> {
  let found = catalogues.get(services);
  if (!found) {
    found = new Map(networkCatalogue(services.config).map((n) => [n.identifier, n]));
    catalogues.set(services, found);
  }
  return found;
}

export const listChannels = defineTool({
  name: 'list_channels',
  title: 'List channels',
  description: [
    'Lists the channels (connected social accounts, pages, chats, webhooks) of this Herald account that posts can go to.',
    'Call it first: create_post, find_next_slot and channel_analytics need a channel "id" from here.',
    'Each channel comes with its network\'s rules ("network.rules": maxLength and how text is counted, maxMedia, minMedia, mediaKinds,',
    'whether later thread items are published as replies) and "network.settings", the JSON Schema of the per-network settings a post may carry',
    '(posts[].settings in create_post; "__type" is the network identifier). "defaultSettings" are what a new post on the channel starts from.',
    'A channel with "disabled": true or "needsReconnect": true cannot publish until a person fixes it in Herald.',
  ].join(' '),
  scope: 'channels:read',
  input: z.object({}).strict(),
  hints: { readOnly: true },
  async run(_args, { services, principal }) {
    const channels = JSON.parse(await services.channels.listJson(principal.accountId)) as { identifier: string }[];
    const catalogue = catalogueOf(services);
    return {
      channels: channels.map((channel) => {
        const network = catalogue.get(channel.identifier);
        return { ...channel, network: network ? { name: network.name, rules: network.rules, settings: network.settings } : null };
      }),
    };
  },
});

export const findNextSlot = defineTool({
  name: 'find_next_slot',
  title: 'Find the next free slot',
  description: [
    "Answers the channel's next free posting time: the first of its daily posting times (in the channel's time zone) that no post takes yet.",
    'Use it to tell a person when a post would go out; create_post with "when": "next_slot" finds and uses this time itself.',
  ].join(' '),
  scope: 'posts:read',
  input: z.object({ id: idParam.shape.id.describe('The channel id, from list_channels') }).strict(),
  hints: { readOnly: true },
  async run({ id }, { services, principal }) {
    return { channel: id, date: iso(await services.channels.findSlot(principal.accountId, id)) };
  },
});
