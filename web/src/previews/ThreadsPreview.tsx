import { FeedView } from './FeedView.tsx';
import type { FamilyProps } from './parts.tsx';
import { threadsPost } from './threads.ts';

/** Threads: the post, its pictures in a sideways row, the replies under it. */
export function ThreadsPreview(props: FamilyProps) {
  const handle = props.input.channel.profile?.replace(/^@+/, '') || undefined;
  return <FeedView props={props} shown={threadsPost(props.input)} handle={handle} row family="threads" />;
}
