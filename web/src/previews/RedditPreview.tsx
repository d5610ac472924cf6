import { t } from '../i18n.ts';
import { type FamilyProps, Flags, MediaCell, PostText } from './parts.tsx';
import { forumPost } from './reddit.ts';

/** Reddit (Lemmy, Moltbook): the community and account, the title with its flair, then the text or the picture. */
export function RedditPreview({ input }: FamilyProps) {
  const shown = forumPost(input);
  return (
    <div className="pv-feed pv-reddit">
      <div className="pv-post" data-testid="preview-post">
        <p className="pv-handle">
          <strong>{shown.community || input.network.name}</strong> · {input.channel.profile ?? input.channel.name}
        </p>
        <p className="pv-title">
          {shown.flair && <span className="pv-flair">{shown.flair}</span>}
          <strong>{shown.title || t('previews.untitled')}</strong>
        </p>
        {shown.cell ? <MediaCell cell={shown.cell} /> : <PostText parts={shown.body} />}
        {shown.others > 0 && <small className="pv-handle">{t('previews.otherCommunities', { count: shown.others })}</small>}
      </div>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
