/** The registry of networks Herald can publish to, by identifier. */
import type { Provider } from './types.ts';
import { webhook } from './networks/webhook.ts';
import { telegram } from './networks/telegram.ts';
import { discord } from './networks/discord.ts';
import { slack } from './networks/slack.ts';
import { nostr } from './networks/nostr.ts';
import { x } from './networks/x/index.ts';
import { linkedin } from './networks/linkedin/member.ts';
import { linkedinPage } from './networks/linkedin/page.ts';
import { pinterest } from './networks/pinterest.ts';
import { reddit } from './networks/reddit.ts';
import { facebook } from './networks/facebook.ts';
import { instagram } from './networks/instagram.ts';
import { instagramStandalone } from './networks/instagram-standalone.ts';
import { threads } from './networks/threads.ts';
import { youtube } from './networks/youtube.ts';
import { tiktok } from './networks/tiktok.ts';
import { mastodon } from './networks/mastodon.ts';
import { bluesky } from './networks/bluesky.ts';
import { wordpress } from './networks/wordpress.ts';
import { skool } from './networks/skool.ts';
import { tiktokBusiness } from './networks/tiktok-business.ts';
import { moltbook } from './networks/moltbook.ts';
import { kick } from './networks/kick.ts';
import { wrapcast } from './networks/wrapcast.ts';
import { vk } from './networks/vk.ts';
import { tumblr } from './networks/tumblr.ts';
import { mewe } from './networks/mewe.ts';
import { twitch } from './networks/twitch.ts';
import { listmonk } from './networks/listmonk.ts';
import { devto } from './networks/devto.ts';
import { lemmy } from './networks/lemmy.ts';
import { hashnode } from './networks/hashnode.ts';
import { medium } from './networks/medium.ts';
import { gmb } from './networks/gmb.ts';
import { dribbble } from './networks/dribbble.ts';
import { whop } from './networks/whop.ts';

/**
 * Every network, in the order lists show them (GET /integrations, the catalogue). A new network is one import and one line here.
 * Each adapter declares its own channel config (`Provider<Config>`); a channel's config is always what its adapter made.
 */
const NETWORKS: Provider<unknown>[] = [
  webhook,
  telegram,
  x,
  linkedin,
  linkedinPage,
  pinterest,
  reddit,
  facebook,
  instagram,
  instagramStandalone,
  threads,
  youtube,
  tiktok,
  mastodon,
  bluesky,
  discord,
  slack,
  nostr,
  devto,
  lemmy,
  hashnode,
  medium,
  gmb,
  dribbble,
  whop,
  listmonk,
  twitch,
  kick,
  tiktokBusiness,
  skool,
  vk,
  wrapcast,
  moltbook,
  tumblr,
  mewe,
  wordpress,
];

const providers = new Map(NETWORKS.map((network) => [network.identifier, network]));

export function findProvider(identifier: string): Provider | undefined {
  return providers.get(identifier);
}

/** Adds a network at run time (tests register a network of their own; plugins could). */
export function registerProvider(provider: Provider): void {
  providers.set(provider.identifier, provider);
}

export function allProviders(): Provider[] {
  return [...providers.values()];
}
