/** A feed post and its thread, drawn from a family's FeedShown: the networks differ in their grid, fold, marks and account line. */
import { t } from '../i18n.ts';
import type { FeedShown } from './feed.ts';
import { ContentWarning, type FamilyProps, Flags, LinkCard, MediaGrid, PostHead, PostText } from './parts.tsx';

export function FeedView({
  props,
  shown,
  handle,
  more = t('previews.seeMore'),
  alt = false,
  row = false,
  family,
  warning,
}: {
  props: FamilyProps;
  shown: FeedShown;
  handle?: string;
  more?: string;
  /** Mark described pictures "ALT" (Bluesky, Mastodon). */
  alt?: boolean;
  /** Pictures in a row that scrolls sideways (Threads). */
  row?: boolean;
  family: string;
  /** A content warning that hides each item's text and media until "Show more" (Mastodon). */
  warning?: string;
}) {
  const { input, picture, signedIn } = props;
  return (
    <div className={`pv-feed pv-${family}`}>
      <ol className="pv-thread">
        {shown.items.map((item, i) => (
          <li key={i} className="pv-post" data-testid="preview-post">
            <PostHead picture={picture} name={input.channel.name} handle={handle} />
            {warning ? (
              <ContentWarning warning={warning}>
                <PostText parts={item.text} more={more} />
                <MediaGrid cells={item.cells} more={item.more} alt={alt} row={row} />
                {item.link && <LinkCard url={item.link} signedIn={signedIn} />}
              </ContentWarning>
            ) : (
              <>
                <PostText parts={item.text} more={more} />
                <MediaGrid cells={item.cells} more={item.more} alt={alt} row={row} />
                {item.link && <LinkCard url={item.link} signedIn={signedIn} />}
              </>
            )}
          </li>
        ))}
      </ol>
      <Flags flags={shown.flags} network={input.network.name} />
    </div>
  );
}
