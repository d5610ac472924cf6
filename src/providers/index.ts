/** The registry of networks Herald can publish to, by identifier. */
import type { Provider } from './types.ts';
import { webhook } from './webhook.ts';
import { telegram } from './telegram.ts';
import { discord } from './discord.ts';
import { slack } from './slack.ts';
import { nostr } from './nostr.ts';
import { x } from './x/index.ts';
import { linkedin } from './linkedin/member.ts';
import { linkedinPage } from './linkedin/page.ts';
import { pinterest } from './pinterest.ts';
import { reddit } from './reddit.ts';
import { facebook } from './facebook.ts';
import { instagram } from './instagram.ts';
import { instagramStandalone } from './instagram-standalone.ts';
import { threads } from './threads.ts';
import { youtube } from './youtube.ts';
import { tiktok } from './tiktok.ts';
import { mastodon } from './mastodon.ts';
import { bluesky } from './bluesky.ts';
// Wave two: one import per network here, and its name in WAVE_TWO below.
import { wordpress } from './wordpress.ts';
import { skool } from './skool.ts';
import { tiktokBusiness } from './tiktok-business.ts';
import { moltbook } from './moltbook.ts';
import { kick } from './kick.ts';
import { wrapcast } from './wrapcast.ts';
import { vk } from './vk.ts';
import { tumblr } from './tumblr.ts';
import { mewe } from './mewe.ts';
import { twitch } from './twitch.ts';
import { listmonk } from './listmonk.ts';
import { devto } from './devto.ts';
import { lemmy } from './lemmy.ts';
import { hashnode } from './hashnode.ts';
import { medium } from './medium.ts';
import { gmb } from './gmb.ts';
import { dribbble } from './dribbble.ts';
import { whop } from './whop.ts';

/** Networks added after the first seventeen, each an adapter module of its own. */
const WAVE_TWO: Provider[] = [
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

const providers = new Map<string, Provider>([[webhook.identifier, webhook]]);
for (const network of [telegram, x, linkedin, linkedinPage, pinterest, reddit]) providers.set(network.identifier, network);
for (const network of [facebook, instagram, instagramStandalone, threads]) providers.set(network.identifier, network);
for (const network of [youtube, tiktok, mastodon, bluesky]) providers.set(network.identifier, network);
for (const network of [discord, slack, nostr]) providers.set(network.identifier, network);
for (const network of WAVE_TWO) providers.set(network.identifier, network);

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
