import { t } from '../i18n.ts';
import { type FamilyProps, Flags, MediaView, PostText } from './parts.tsx';
import { tiktokVideo } from './video.ts';

/** TikTok: the video (or photos) full screen at 9:16, the account and caption over it. */
export function TikTokPreview({ input }: FamilyProps) {
  const shown = tiktokVideo(input);
  const handle = `@${(input.channel.profile ?? input.channel.name).replace(/^@+/, '')}`;
  return (
    <div className="pv-feed pv-tiktok">
      <div className="pv-post pv-screen" style={{ aspectRatio: String(shown.ratio) }} data-testid="preview-player">
        {shown.media && <MediaView media={shown.media} />}
        <div className="pv-overlay">
          <strong>{handle}</strong>
          {shown.title && <strong className="pv-title">{shown.title}</strong>}
          <PostText parts={shown.description} more={t('previews.more')} />
          {shown.photos > 1 && <small>{t('previews.photos', { count: shown.photos })}</small>}
        </div>
      </div>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
