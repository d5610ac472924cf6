/**
 * One post on the calendar: its channel (picture or coloured initials, and its
 * name), its state, its time and the start of its text. FullCalendar's own
 * element around it is the link; everything here is read out with it.
 */
import { useState } from 'react';
import { t } from '../../i18n.ts';
import type { Prefs } from '../../prefs.ts';
import { formatWhen } from '../../time.ts';
import { StateBadge } from '../../components/ui.tsx';
import { ApprovalBadge } from '../../components/Approval.tsx';
import { StateIcon } from '../../components/StateIcon.tsx';
import { RetryingBadge, retryingText, type Retrying } from '../../components/Retrying.tsx';
import { channelHue, initials, type CalendarPost, type TileChannel } from './tiles.ts';

/** The channel's picture, or its initials on a colour of its own when it has none (or it fails to load). */
export function ChannelAvatar({ channel, size = 18 }: { channel: TileChannel; size?: number }) {
  const [broken, setBroken] = useState(false);
  if (channel.picture && !broken) {
    return <img className="avatar" src={channel.picture} alt="" width={size} height={size} onError={() => setBroken(true)} />;
  }
  return (
    <span
      className="avatar avatar-initials"
      style={{ width: size, height: size, background: `hsl(${channelHue(channel.id)} 55% 30%)` }}
      aria-hidden="true"
      data-initials={initials(channel.name)}
    >
      {initials(channel.name)}
    </span>
  );
}

export function PostTile({
  post,
  retry: retrying,
  timeText,
  chosen,
  prefs,
}: {
  post: CalendarPost;
  retry?: Retrying;
  timeText: string;
  chosen: boolean;
  prefs: Prefs;
}) {
  // A queued post the engine is trying again: its attempt, next try and last reason.
  const retry = post.state === 'QUEUE' ? retrying : undefined;
  const reason = post.state === 'ERROR' && post.error ? t('calendar.failedBecause', { reason: post.error }) : retry ? retryingText(retry, prefs) : '';
  return (
    <span
      className={post.approval === 'pending' ? 'event event-pending' : 'event'}
      title={reason || undefined}
      data-testid={`event-${post.id}`}
      data-state={post.state}
      data-retrying={retry ? retry.attempt : undefined}
      data-approval={post.approval ?? undefined}
    >
      <span className="event-head">
        <StateIcon state={post.state} />
        <ChannelAvatar channel={post.channel} />
        <span className="event-channel" title={post.channel.network || undefined}>
          {post.channel.name}
        </span>
        {post.seriesId && (
          <span className="event-repeat" title={t('series.marker')}>
            <span aria-hidden="true">↻</span>
            <span className="visually-hidden">{t('series.marker')}</span>
          </span>
        )}
        {/* The state's icon and edge show it; its word is read out, and left out of the narrow tile for the channel's name. */}
        {post.approval === 'pending' || post.approval === 'rejected' ? (
          <ApprovalBadge approval={post.approval} />
        ) : retry ? (
          <RetryingBadge retry={retry} short />
        ) : (
          <span className="visually-hidden">
            <StateBadge state={post.state} />
          </span>
        )}
      </span>
      <span className="event-text">
        {timeText} {post.text}
      </span>
      <span className="visually-hidden">{formatWhen(post.publishDate, prefs)}</span>
      {reason && <span className="event-reason">{reason}</span>}
      {chosen && <span className="visually-hidden">, {t('bulk.chosen')}</span>}
    </span>
  );
}
