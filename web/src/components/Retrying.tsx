/**
 * A queued post the engine is retrying after a failure it expects to pass (a
 * 5xx, a timeout). The public API still says QUEUE; the server's own route
 * (GET /api/app/posts/retrying) says which attempt it is, when the next one is
 * and why the last one failed, so the pages say "retrying" instead of "queued".
 */
import { useQuery } from '@tanstack/react-query';
import { api, type AppAnswer } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import type { Prefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';

export type Retrying = AppAnswer<'retrying'>[number];

/** The account's retrying posts by id; under the posts' key, so every change the live stream reports asks again. */
export function useRetrying() {
  return useQuery({
    queryKey: [...keys.posts, 'retrying'],
    queryFn: async () => new Map((await api('GET', '/posts/retrying')).map((r) => [r.id, r])),
  });
}

/** `short`: one word, where room is scarce (a calendar tile, whose full text says the attempt). */
export function RetryingBadge({ retry, short = false }: { retry: Retrying; short?: boolean }) {
  return <span className="state state-retrying">{short ? t('retrying.short') : t('retrying.badge', { attempt: retry.attempt })}</span>;
}

/** The attempt, the next try and the last reason, in one sentence. */
export function retryingText(retry: Retrying, prefs: Prefs): string {
  const next = retry.nextTryAt ? t('retrying.next', { when: formatWhen(retry.nextTryAt, prefs) }) : t('retrying.now');
  return t('retrying.detail', { attempt: retry.attempt, next, reason: retry.lastReason });
}
