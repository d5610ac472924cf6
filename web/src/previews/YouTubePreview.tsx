import { t } from '../i18n.ts';
import { type FamilyProps, Flags, MediaView, PostHead, PostText } from './parts.tsx';
import { youtubeVideo } from './video.ts';

/** YouTube: the player (16:9, or 9:16 for a Short) with its cover, the title and the channel, the description folded. */
export function YouTubePreview({ input, picture }: FamilyProps) {
  const shown = youtubeVideo(input);
  return (
    <div className="pv-feed pv-youtube">
      <div className="pv-post" data-testid="preview-post">
        <div className="pv-player" style={{ aspectRatio: String(shown.ratio) }} data-testid="preview-player">
          {shown.cover ? <img src={shown.cover} alt="" /> : shown.media ? <MediaView media={shown.media} /> : <span className="pv-play">▶</span>}
          {shown.short && <span className="pv-badge">{t('previews.short')}</span>}
        </div>
        <strong className="pv-title">{shown.title || t('previews.untitled')}</strong>
        <PostHead picture={picture} name={input.channel.name} />
        <PostText parts={shown.description} more={t('previews.more')} />
      </div>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
