/**
 * Which preview each network gets: networks that show a post the same way
 * share a family. Every network Herald publishes to has an entry here
 * (test/unit/preview-families.test.ts holds that); one the web does not know
 * yet is shown as a message.
 */
export const FAMILIES = [
  'x',
  'linkedin',
  'facebook',
  'instagram',
  'threads',
  'bluesky',
  'mastodon',
  'youtube',
  'tiktok',
  'pinterest',
  'reddit',
  'message',
  'blog',
] as const;

export type Family = (typeof FAMILIES)[number];

export const FAMILY_OF: Readonly<Record<string, Family>> = {
  x: 'x',
  linkedin: 'linkedin',
  'linkedin-page': 'linkedin',
  facebook: 'facebook',
  // Feeds of posts with a "see more" and a picture grid, as Facebook's.
  vk: 'facebook',
  mewe: 'facebook',
  gmb: 'facebook',
  instagram: 'instagram',
  'instagram-standalone': 'instagram',
  threads: 'threads',
  // Short notes with pictures in a row and a link's card, as on Threads.
  nostr: 'threads',
  wrapcast: 'threads',
  bluesky: 'bluesky',
  mastodon: 'mastodon',
  youtube: 'youtube',
  tiktok: 'tiktok',
  'tiktok-business': 'tiktok',
  pinterest: 'pinterest',
  dribbble: 'pinterest',
  reddit: 'reddit',
  lemmy: 'reddit',
  moltbook: 'reddit',
  discord: 'message',
  slack: 'message',
  telegram: 'message',
  webhook: 'message',
  twitch: 'message',
  kick: 'message',
  devto: 'blog',
  hashnode: 'blog',
  medium: 'blog',
  wordpress: 'blog',
  tumblr: 'blog',
  listmonk: 'blog',
  skool: 'blog',
  whop: 'blog',
};

export const familyOf = (identifier: string): Family => FAMILY_OF[identifier] ?? 'message';
