import { blueskyPost } from './bluesky.ts';
import { FeedView } from './FeedView.tsx';
import type { FamilyProps } from './parts.tsx';

/** Bluesky: the post with its pictures (ALT marked) or the card Herald builds for its first link. */
export function BlueskyPreview(props: FamilyProps) {
  const handle = props.input.channel.profile ? `@${props.input.channel.profile.replace(/^@+/, '')}` : undefined;
  return <FeedView props={props} shown={blueskyPost(props.input)} handle={handle} alt family="bluesky" />;
}
