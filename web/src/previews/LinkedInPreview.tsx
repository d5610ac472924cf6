import { t } from '../i18n.ts';
import { FeedView } from './FeedView.tsx';
import { linkedinPost } from './linkedin.ts';
import type { FamilyProps } from './parts.tsx';

/** LinkedIn: the post folded at "…see more", its pictures, or a document under its title. */
export function LinkedInPreview(props: FamilyProps) {
  const shown = linkedinPost(props.input);
  return (
    <>
      <FeedView props={props} shown={shown} family="linkedin" />
      {shown.document && (
        <div className="pv-document" data-testid="preview-document">
          <strong>{shown.document.title}</strong>
          <span className="pv-handle">
            {t('previews.document')} · {shown.document.media.name}
          </span>
        </div>
      )}
    </>
  );
}
