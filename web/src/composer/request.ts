/**
 * What saving the composer sends, worked out from the draft: the alt texts to
 * store on the files first, then either the posts (POST /posts) or the
 * repeating post (POST or PUT /series). Pure (no React, no DOM), so the unit
 * tests check each request the form can make without a browser.
 */
import { fromLocalInput } from '../wall-clock.ts';
import { isRepeating, itemsOf, repeatOf, type Draft } from './draft.ts';
import { repeatBody } from './repeat-draft.ts';

/** A selected channel, as much of it as the request names. */
export interface Target {
  id: string;
  /** The network, which the post's settings name as their `__type`. */
  identifier: string;
}

export interface SaveContext {
  /** The post being edited, if any. */
  editing?: string;
  /** The channel's next free slot (ISO), when the draft is to be published there. */
  slot?: string;
}

/** The instant chosen: the date and time in the draft's zone, or the slot; none for "now" and drafts. */
export function chosenInstant(draft: Draft, slot?: string): number | undefined {
  if (draft.when === 'at') return fromLocalInput(draft.local, draft.zone);
  if (draft.when === 'slot') return slot ? Date.parse(slot) : undefined;
  return undefined;
}

/** The `type` of a POST /posts body. */
export function postType(draft: Draft, editing: boolean): 'update' | 'draft' | 'now' | 'schedule' {
  if (editing) return 'update';
  if (draft.when === 'draft') return 'draft';
  if (draft.when === 'now') return 'now';
  return 'schedule';
}

/** One entry per selected channel, in the order they are listed: its items (or the shared ones) and its settings. */
export function postEntries(draft: Draft, targets: Target[]) {
  return targets.map((c) => ({
    integration: { id: c.id },
    ...(draft.group ? { group: draft.group } : {}),
    value: itemsOf(draft, c.id).map((item) => ({ content: item.content, delay: item.delay, image: item.media.map((m) => ({ id: m.id, path: m.path })) })),
    settings: { __type: c.identifier, ...(draft.settings[c.id] ?? {}) },
  }));
}

/** The alt texts written in the composer, one per file (the last one written wins), for PATCH /media/{id}. */
export function altTexts(draft: Draft, targets: Target[]): [id: string, alt: string][] {
  return [
    ...new Map(
      targets
        .flatMap((c) => itemsOf(draft, c.id).flatMap((i) => i.media))
        .filter((m) => m.alt)
        .map((m) => [m.id, m.alt]),
    ),
  ];
}

/**
 * POST /posts (and, when a post being edited is kept as a draft, PUT
 * /posts/{id}/status afterwards), or the series; a series without its first
 * date and time has no body, which the form reports on the start.
 */
export type Save = { to: 'posts'; body: ReturnType<typeof postsBody>; thenDraft: boolean } | { to: 'series'; body: ReturnType<typeof seriesBody> | undefined };

function postsBody(draft: Draft, targets: Target[], editing: boolean, date: number | undefined) {
  return {
    type: postType(draft, editing),
    ...(date !== undefined ? { date: new Date(date).toISOString() } : {}),
    shortLink: draft.shortLink,
    posts: postEntries(draft, targets),
  };
}

function seriesBody(draft: Draft, targets: Target[], start: number) {
  const repeat = repeatOf(draft);
  return {
    name: repeat.name.trim() || undefined,
    repeat: repeatBody(repeat, start, draft.zone),
    shortLink: draft.shortLink,
    posts: postEntries(draft, targets),
  };
}

/** The request that stores the draft for the selected channels. */
export function saveRequest(draft: Draft, targets: Target[], { editing, slot }: SaveContext = {}): Save {
  const date = chosenInstant(draft, slot);
  if (isRepeating(draft, !!editing)) return { to: 'series', body: date === undefined ? undefined : seriesBody(draft, targets, date) };
  return { to: 'posts', body: postsBody(draft, targets, !!editing, date), thenDraft: !!editing && draft.when === 'draft' };
}

/** Everything saving sends, in order: the alt texts, then the save itself. */
export function composerRequests(draft: Draft, targets: Target[], context: SaveContext = {}): { altTexts: [id: string, alt: string][]; save: Save } {
  return { altTexts: altTexts(draft, targets), save: saveRequest(draft, targets, context) };
}
