import { FeedView } from './FeedView.tsx';
import type { FamilyProps } from './parts.tsx';
import { xPost } from './x.ts';

/** X: the post, its pictures in X's grid or a link's card, and the thread beneath. */
export function XPreview(props: FamilyProps) {
  const handle = props.input.channel.profile ? `@${props.input.channel.profile.replace(/^@+/, '')}` : undefined;
  return <FeedView props={props} shown={xPost(props.input)} handle={handle} family="x" />;
}
