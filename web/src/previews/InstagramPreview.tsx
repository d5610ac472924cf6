import { useQuery } from '@tanstack/react-query';
import { api, pub } from '../api.ts';
import { t } from '../i18n.ts';
import { type GridPost, instagramPost, profileGrid } from './instagram.ts';
import { type FamilyProps, Flags, MediaCell, PostHead, PostText, sideways } from './parts.tsx';

const DAY = 86_400_000;
const KIND_WORD = { reel: 'previews.reel', story: 'previews.story' } as const;

/** Instagram: the post as the feed frames it (image, carousel, reel or story) and the profile's grid with it in place. */
export function InstagramPreview(props: FamilyProps & { postId?: string }) {
  const { input, picture } = props;
  const shown = instagramPost(input);
  const handle = input.channel.profile?.replace(/^@+/, '') || input.channel.name;
  const tall = shown.kind === 'story' || shown.kind === 'reel';
  return (
    <div className={`pv-feed pv-instagram pv-ig-${shown.kind}`}>
      <div className="pv-post" data-testid="preview-post">
        <PostHead picture={picture} name={handle} extra={shown.kind in KIND_WORD ? t(KIND_WORD[shown.kind as keyof typeof KIND_WORD]) : undefined} />
        {shown.cells.length > 0 && (
          <div
            className={tall ? 'pv-stories' : 'pv-carousel'}
            data-testid="preview-grid"
            data-count={shown.cells.length}
            {...sideways(t('previews.pictures', { count: shown.cells.length }))}
          >
            {shown.cells.map((cell, i) => (
              <div key={i} className={tall ? 'pv-story' : 'pv-slide'}>
                <MediaCell cell={cell} />
              </div>
            ))}
          </div>
        )}
        {shown.kind === 'carousel' && (
          <p className="pv-dots">
            <span className="visually-hidden">{t('previews.carousel', { count: shown.cells.length })}</span>
            {shown.cells.map((_, i) => (
              <span key={i} aria-hidden="true">
                {i === 0 ? '●' : '○'}
              </span>
            ))}
          </p>
        )}
        {shown.kind !== 'story' && <PostText parts={{ ...shown.caption, shown: `${handle} ${shown.caption.shown}`.trim() }} more={t('previews.more')} />}
      </div>
      <Flags flags={shown.flags} network={input.network.name} />
      {props.signedIn && shown.kind !== 'story' && <ProfileGrid {...props} />}
    </div>
  );
}

/** The profile's next nine tiles: the channel's planned and published posts, this one among them at its date. */
function ProfileGrid({ input, channelId, planned, postId }: FamilyProps & { postId?: string }) {
  const posts = useQuery({
    queryKey: ['profile-grid', channelId],
    queryFn: () => {
      const now = Date.now();
      const range = `startDate=${encodeURIComponent(new Date(now - 90 * DAY).toISOString())}&endDate=${encodeURIComponent(new Date(now + 180 * DAY).toISOString())}`;
      return api('GET', pub(`/posts?${range}`));
    },
    staleTime: 60_000,
  });
  const others: GridPost[] = (posts.data?.posts ?? [])
    .filter((p) => p.integration.id === channelId && (p.state === 'QUEUE' || p.state === 'PUBLISHED'))
    .map((p) => ({ id: p.id, at: Date.parse(p.publishDate), cover: p.image[0]?.path }));
  const first = input.items[0]?.media[0];
  const tiles = profileGrid({ id: postId ?? 'this', at: planned ?? Date.now(), cover: first?.thumbnail ?? first?.path }, others);
  return (
    <section className="pv-profile" aria-label={t('previews.grid')}>
      <h3>{t('previews.grid')}</h3>
      <ol className="pv-tiles" data-testid="profile-grid">
        {tiles.map((tile) => (
          <li key={tile.id} className={tile.current ? 'pv-tile pv-tile-this' : 'pv-tile'} data-current={tile.current ? 'yes' : 'no'}>
            {tile.cover ? <img src={tile.cover} alt="" /> : <span className="pv-tile-empty" />}
            <span className={tile.current ? 'pv-badge' : 'visually-hidden'}>{t(tile.current ? 'previews.gridThis' : 'previews.gridOther')}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
