import { t } from '../i18n.ts';
import { facebookPost } from './facebook.ts';
import { FeedView } from './FeedView.tsx';
import { type FamilyProps, Flags, MediaCell, sideways } from './parts.tsx';

/** Facebook: the post folded at "See more" with its pictures in Facebook's layouts, or a story's full-screen frames. */
export function FacebookPreview(props: FamilyProps) {
  const shown = facebookPost(props.input);
  if (shown.kind === 'post') return <FeedView props={props} shown={shown} more={t('previews.seeMoreFacebook')} family="facebook" />;
  return (
    <div className="pv-feed pv-facebook">
      <div className="pv-stories" {...sideways(t('previews.pictures', { count: shown.frames.length }))}>
        {shown.frames.map((cell, i) => (
          <div key={i} className="pv-story">
            <span className="visually-hidden">{t('previews.story')}</span>
            <MediaCell cell={cell} />
          </div>
        ))}
      </div>
      <Flags flags={shown.flags} network={props.input.network.name} />
    </div>
  );
}
