/**
 * A message about what the person just did, shown where they look (pinned to
 * the bottom of the window, not at the top of a long page) and read out by
 * screen readers: the live region is always in the page, so a new message is
 * announced when it appears.
 */
import { t } from '../i18n.ts';

export interface Announcement {
  kind: 'success' | 'warning';
  text: string;
}

export function Announcer({ message, onClose }: { message?: Announcement; onClose: () => void }) {
  return (
    <div className="announcer" role="status" aria-live="polite" data-testid="announcer">
      {message && (
        <div className={`note note-${message.kind}`}>
          <p>{message.text}</p>
          <button type="button" className="quiet" onClick={onClose} aria-label={t('common.close')}>
            ×
          </button>
        </div>
      )}
    </div>
  );
}
