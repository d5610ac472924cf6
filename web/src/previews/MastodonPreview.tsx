import { FeedView } from './FeedView.tsx';
import { mastodonHandle, mastodonPost } from './mastodon.ts';
import type { FamilyProps } from './parts.tsx';

/** Mastodon: the toot under @user@server, pictures in a 16:9 box with their ALT marks. */
export function MastodonPreview(props: FamilyProps) {
  const { profile, name } = props.input.channel;
  return <FeedView props={props} shown={mastodonPost(props.input)} handle={mastodonHandle(profile, name)} alt family="mastodon" />;
}
