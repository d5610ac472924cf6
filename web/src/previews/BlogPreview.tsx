import { t } from '../i18n.ts';
import { article } from './blog.ts';
import { type FamilyProps, Flags, PostHead } from './parts.tsx';

/** A blog or newsletter: the article as lists show it: cover, title, subtitle, excerpt, author. */
export function BlogPreview({ input, picture }: FamilyProps) {
  const shown = article(input);
  return (
    <div className="pv-feed pv-blog">
      <article className="pv-post pv-article" data-testid="preview-post">
        {shown.cover && <img className="pv-cover" src={shown.cover} alt="" />}
        <strong className="pv-title">{shown.title || t('previews.untitled')}</strong>
        {shown.subtitle && <p className="pv-handle">{shown.subtitle}</p>}
        {shown.excerpt && <p className="pv-text">{shown.excerpt}</p>}
        <PostHead picture={picture} name={input.channel.name} />
      </article>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
