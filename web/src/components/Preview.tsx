/**
 * How a post will look on one network, as that network shows it today: the
 * channel's network picks its family's view (web/src/previews/families.ts),
 * which draws the post from what that family's pure function says is shown,
 * folded, cut or cropped.
 */
import type { ComponentType } from 'react';
import type { Channel, Network } from '../api.ts';
import type { ItemDraft } from '../composer-rules.ts';
import { type Family, familyOf } from '../previews/families.ts';
import { type FamilyProps, useSizes } from '../previews/parts.tsx';
import { BlogPreview } from '../previews/BlogPreview.tsx';
import { BlueskyPreview } from '../previews/BlueskyPreview.tsx';
import { FacebookPreview } from '../previews/FacebookPreview.tsx';
import { InstagramPreview } from '../previews/InstagramPreview.tsx';
import { LinkedInPreview } from '../previews/LinkedInPreview.tsx';
import { MastodonPreview } from '../previews/MastodonPreview.tsx';
import { MessagePreview } from '../previews/MessagePreview.tsx';
import { PinterestPreview } from '../previews/PinterestPreview.tsx';
import { RedditPreview } from '../previews/RedditPreview.tsx';
import { ThreadsPreview } from '../previews/ThreadsPreview.tsx';
import { TikTokPreview } from '../previews/TikTokPreview.tsx';
import { XPreview } from '../previews/XPreview.tsx';
import { YouTubePreview } from '../previews/YouTubePreview.tsx';

const VIEWS: Record<Family, ComponentType<FamilyProps & { postId?: string }>> = {
  x: XPreview,
  linkedin: LinkedInPreview,
  facebook: FacebookPreview,
  instagram: InstagramPreview,
  threads: ThreadsPreview,
  bluesky: BlueskyPreview,
  mastodon: MastodonPreview,
  youtube: YouTubePreview,
  tiktok: TikTokPreview,
  pinterest: PinterestPreview,
  reddit: RedditPreview,
  message: MessagePreview,
  blog: BlogPreview,
};

/** What a preview needs (the preview link's page has no more than this). */
interface Shown {
  channel: Pick<Channel, 'id' | 'name' | 'picture' | 'profile'>;
  network: Pick<Network, 'identifier' | 'name' | 'rules'>;
  items: ItemDraft[];
  settings?: Record<string, unknown>;
  /** When the post goes out (ms since the epoch), for the views that place it among others. */
  planned?: number;
  /** The post being edited, so the profile grid does not show it twice. */
  postId?: string;
  /** A signed-in person: the views may ask the server for link cards and the channel's posts. */
  signedIn?: boolean;
}

export function Preview({ channel, network, items, settings = {}, planned, postId, signedIn = false }: Shown) {
  const sizes = useSizes(items.flatMap((i) => i.media));
  const family = familyOf(network.identifier);
  const View = VIEWS[family];
  const input = {
    network: { identifier: network.identifier, name: network.name, rules: network.rules },
    channel: { name: channel.name, profile: channel.profile },
    items,
    settings,
    sizes,
  };
  return (
    <div className={`preview preview-${network.identifier}`} data-testid={`preview-${channel.id}`} data-family={family}>
      <View input={input} channelId={channel.id} picture={channel.picture} planned={planned} postId={postId} signedIn={signedIn} />
    </div>
  );
}
