/**
 * A draft from what the server holds: a post (to copy or to edit) or a series
 * (to edit), in the composer's terms.
 */
import type { PostDetail, SeriesDetail } from '../api.ts';
import { fromRef } from '../components/MediaPicker.tsx';
import { toLocalInput } from '../wall-clock.ts';
import { blankDraft, emptyItem, type Draft } from './draft.ts';
import { fromRule } from './repeat-draft.ts';

const HOUR = 3_600_000;

/** A post to copy (planned an hour from now at the earliest) or to edit (in its group, at its own date). */
export function fromPost(post: PostDetail, zone: string, editing: boolean): Draft {
  const { __type: _, ...settings } = post.settings;
  return {
    ...blankDraft(zone),
    channels: [post.integration.id],
    shared: post.thread.map((item) => ({
      content: item.content,
      delay: item.delay,
      media: item.image.map(fromRef),
    })),
    settings: { [post.integration.id]: settings },
    when: post.state === 'DRAFT' ? 'draft' : 'at',
    local: toLocalInput(Math.max(Date.parse(post.publishDate), editing ? 0 : Date.now() + HOUR), zone),
    group: editing ? post.group : undefined,
  };
}

/** A series being edited: its post (one text, or one per channel when they differ), settings and rule. */
export function fromSeries(series: SeriesDetail): Draft {
  const zone = series.repeat.timezone;
  const items = (cid: string) =>
    (series.posts.find((p) => p.integration.id === cid)?.value ?? []).map((v) => ({ content: v.content, delay: v.delay, media: v.image.map(fromRef) }));
  const [first] = series.posts;
  const shared = first ? items(first.integration.id) : [emptyItem()];
  const same = (cid: string) => JSON.stringify(items(cid)) === JSON.stringify(shared);
  return {
    ...blankDraft(zone),
    channels: series.posts.map((p) => p.integration.id),
    shared,
    custom: Object.fromEntries(series.posts.filter((p) => !same(p.integration.id)).map((p) => [p.integration.id, items(p.integration.id)])),
    settings: Object.fromEntries(
      series.posts.map((p) => {
        const { __type: _, ...settings } = p.settings ?? {};
        return [p.integration.id, settings];
      }),
    ),
    when: 'at',
    local: toLocalInput(Date.parse(series.repeat.start), zone),
    shortLink: series.shortLink,
    repeat: fromRule(series.repeat, series.name),
  };
}
