/**
 * What a person does to several posts at once from the calendar: move them by
 * some days, duplicate them as drafts, delete them. Each post goes through the
 * same route a single change uses; the summary says which ones were refused and
 * why (a published post does not move, one being sent cannot change).
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, pub, type PostSummary } from '../api.ts';

/** What the bulk actions need of a post. */
type Selected = Pick<PostSummary, 'id' | 'content' | 'publishDate'>;
import { keys } from '../data.ts';
import { t } from '../i18n.ts';

const DAY = 86_400_000;

/** Runs `work` on each post and words the outcome: how many succeeded, and each refusal with its reason. */
async function each(posts: Selected[], work: (post: Selected) => Promise<unknown>): Promise<{ done: number; refused: string[] }> {
  const outcomes = await Promise.allSettled(posts.map(work));
  const refused = outcomes.flatMap((o, i) =>
    o.status === 'rejected' ? [`${posts[i]!.content.slice(0, 30) || posts[i]!.id}: ${(o.reason as Error).message}`] : [],
  );
  return { done: outcomes.length - refused.length, refused };
}

function duplicate(post: Selected) {
  return api('GET', pub(`/posts/${post.id}`)).then((detail) =>
    api('POST', pub('/posts'), {
      type: 'draft',
      date: detail.publishDate,
      posts: [
        {
          integration: { id: detail.integration.id },
          settings: detail.settings,
          value: detail.thread.map((item) => ({ content: item.content, image: item.image, delay: item.delay })),
        },
      ],
    }),
  );
}

export function BulkActions({ selected, onDone }: { selected: Selected[]; onDone: (summary: { kind: 'success' | 'warning'; text: string }) => void }) {
  const client = useQueryClient();
  const [days, setDays] = useState(1);
  const [busy, setBusy] = useState(false);
  const run = async (work: (post: Selected) => Promise<unknown>) => {
    setBusy(true);
    const { done, refused } = await each(selected, work);
    setBusy(false);
    await client.invalidateQueries({ queryKey: keys.posts });
    onDone({
      kind: refused.length ? 'warning' : 'success',
      text: [t('bulk.done', { count: done }), ...refused.map((r) => t('bulk.refused', { reason: r }))].join(' '),
    });
  };
  return (
    <section className="bulk" aria-label={t('bulk.label')}>
      <strong>{t('bulk.selected', { count: selected.length })}</strong>
      <label className="inline">
        {t('bulk.days')}
        <input type="number" value={days} onChange={(e) => setDays(Math.trunc(Number(e.target.value)) || 0)} style={{ width: '5rem' }} />
      </label>
      <button
        type="button"
        disabled={busy || selected.length === 0 || days === 0}
        onClick={() => run((p) => api('PUT', `/posts/${p.id}/date`, { date: new Date(Date.parse(p.publishDate) + days * DAY).toISOString() }))}
      >
        {t('bulk.move')}
      </button>
      <button type="button" disabled={busy || selected.length === 0} onClick={() => run(duplicate)}>
        {t('bulk.duplicate')}
      </button>
      <button
        type="button"
        className="danger"
        disabled={busy || selected.length === 0}
        onClick={() => confirm(t('bulk.confirmDelete', { count: selected.length })) && run((p) => api('DELETE', pub(`/posts/${p.id}`)))}
      >
        {t('common.delete')}
      </button>
    </section>
  );
}
