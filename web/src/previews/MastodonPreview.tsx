import { FeedView } from './FeedView.tsx';
import { mastodonHandle, mastodonPost } from './mastodon.ts';
import type { FamilyProps } from './parts.tsx';

/** Mastodon: the toot under @user@server, pictures in a 16:9 box with their ALT marks, behind its content warning if it has one. */
export function MastodonPreview(props: FamilyProps) {
  const { profile, name } = props.input.channel;
  const shown = mastodonPost(props.input);
  return <FeedView props={props} shown={shown} handle={mastodonHandle(profile, name)} alt family="mastodon" warning={shown.warning} />;
}
