/**
 * RSS and Atom feeds: each subscription with its state, last read and last
 * error; adding and changing one (URL, channels, post text, when to post,
 * image); pausing, reading now and deleting.
 */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { z } from 'zod';
import type { feed, feedCheck } from '../../../src/contract/index.ts';
import { api, pub, type Channel } from '../api.ts';
import { useAction, useChannels } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { DeleteButton, Dialog, ErrorNote, FieldError, Loading, Notice, TextField } from '../components/ui.tsx';

type Feed = z.output<typeof feed>;
type FeedCheck = z.output<typeof feedCheck>;
type Mode = Feed['mode'];

const FEEDS = ['feeds'];
const MODES: [Mode, MessageKey][] = [
  ['now', 'feeds.modeNow'],
  ['slot', 'feeds.modeSlot'],
  ['draft', 'feeds.modeDraft'],
];
const STATES: Record<Feed['state'], MessageKey> = {
  ok: 'feeds.stateOk',
  failing: 'feeds.stateFailing',
  paused: 'feeds.statePaused',
  waiting: 'feeds.stateWaiting',
};
const STATE_CLASS: Record<Feed['state'], string> = { ok: 'state-published', failing: 'state-error', paused: 'state-draft', waiting: 'state-queue' };

export function FeedsPage() {
  // Feeds are read in the background: look again now and then while the page is open.
  const list = useQuery({ queryKey: FEEDS, queryFn: () => api('GET', pub('/feeds')), refetchInterval: 15_000 });
  const channels = useChannels();
  const { error, act } = useAction(FEEDS);
  const [editing, setEditing] = useState<Feed | 'new'>();
  const [checked, setChecked] = useState<{ id: string; result: FeedCheck }>();
  if (list.isPending || channels.isPending) return <Loading />;
  const channelName = new Map((channels.data ?? []).map((c) => [c.id, c.name]));
  return (
    <section>
      <div className="page-head">
        <h1>{t('feeds.title')}</h1>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          {t('feeds.add')}
        </button>
      </div>
      <p>{t('feeds.intro')}</p>
      <ErrorNote error={list.error ?? channels.error ?? error} onRetry={() => void list.refetch()} />
      {list.data?.length === 0 && <p>{t('feeds.none')}</p>}
      <ul className="cards">
        {list.data?.map((f) => (
          <FeedCard
            key={f.id}
            feed={f}
            channelNames={f.channels.map((id) => channelName.get(id) ?? id)}
            checked={checked?.id === f.id ? checked.result : undefined}
            onEdit={() => setEditing(f)}
            onPause={() => act(() => api('PATCH', pub(`/feeds/${f.id}`), { paused: !f.paused }))}
            onCheck={async () => {
              const result = await act(() => api('POST', pub(`/feeds/${f.id}/check`)));
              if (result) setChecked({ id: f.id, result });
            }}
            onDelete={() => act(() => api('DELETE', pub(`/feeds/${f.id}`)))}
          />
        ))}
      </ul>
      <Dialog title={editing === 'new' ? t('feeds.add') : t('feeds.edit')} open={editing !== undefined} onClose={() => setEditing(undefined)}>
        {editing !== undefined && (
          <FeedForm feed={editing === 'new' ? undefined : editing} channels={channels.data ?? []} onDone={() => setEditing(undefined)} />
        )}
      </Dialog>
    </section>
  );
}

function FeedCard(props: {
  feed: Feed;
  channelNames: string[];
  checked?: FeedCheck;
  onEdit: () => void;
  onPause: () => void;
  onCheck: () => void;
  onDelete: () => void;
}) {
  const prefs = usePrefs();
  const { feed: f, checked } = props;
  const name = f.name ?? f.title ?? f.url;
  return (
    <li className="card" data-testid={`feed-${f.id}`}>
      <div className="row">
        <strong>{name}</strong>
        <span className={`state ${STATE_CLASS[f.state]}`}>{t(STATES[f.state])}</span>
      </div>
      <code>{f.url}</code>
      <small>
        {t(MODES.find(([m]) => m === f.mode)![1])} · {props.channelNames.join(', ')}
      </small>
      <small>
        {f.lastFetchedAt ? t('feeds.lastRead', { when: formatWhen(f.lastFetchedAt, prefs) }) : t('feeds.notRead')}
        {f.nextFetchAt && ` · ${t('feeds.nextRead', { when: formatWhen(f.nextFetchAt, prefs) })}`}
      </small>
      {f.lastError && (
        <p className="field-error" data-testid="feed-error">
          {t('feeds.lastError', { count: f.failures, error: f.lastError })}
        </p>
      )}
      {checked && <Notice kind={checked.outcome === 'failed' ? 'warning' : 'success'}>{checkSummary(checked)}</Notice>}
      <div className="row">
        <button type="button" onClick={props.onCheck} disabled={f.paused}>
          {t('feeds.check')}
        </button>
        <button type="button" onClick={props.onPause}>
          {f.paused ? t('feeds.resume') : t('feeds.pause')}
        </button>
        <button type="button" onClick={props.onEdit}>
          {t('common.edit')}
        </button>
        <DeleteButton name={name} onConfirm={props.onDelete} />
      </div>
    </li>
  );
}

function checkSummary(result: FeedCheck): string {
  if (result.outcome === 'posted') return t('feeds.checkPosted', { count: result.newItems });
  if (result.outcome === 'recorded') return t('feeds.checkRecorded');
  if (result.outcome === 'failed') return t('feeds.checkFailed', { error: result.feed.lastError ?? '' });
  return t('feeds.checkNothing');
}

const DEFAULT_TEMPLATE = '{title}\n\n{link}';

function FeedForm({ feed: existing, channels, onDone }: { feed?: Feed; channels: Channel[]; onDone: () => void }) {
  const [form, setForm] = useState({
    url: existing?.url ?? '',
    name: existing?.name ?? '',
    channels: existing?.channels ?? [],
    template: existing?.template ?? DEFAULT_TEMPLATE,
    mode: existing?.mode ?? ('now' as Mode),
    attachImage: existing?.attachImage ?? false,
  });
  const { error, act } = useAction(FEEDS);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const name = form.name.trim();
        const saved = await act(() =>
          existing
            ? api('PATCH', pub(`/feeds/${existing.id}`), { ...form, name: name || null })
            : api('POST', pub('/feeds'), { ...form, name: name || undefined }),
        );
        if (saved) onDone();
      }}
    >
      <TextField label={t('feeds.url')} type="url" value={form.url} onChange={(url) => setForm({ ...form, url })} error={error} path="url" id="feed-url" />
      <TextField label={t('feeds.name')} value={form.name} onChange={(name) => setForm({ ...form, name })} error={error} path="name" id="feed-name" />
      <fieldset aria-describedby="feed-channels-error">
        <legend>{t('feeds.channels')}</legend>
        {channels.length === 0 && <p className="hint">{t('feeds.noChannels')}</p>}
        {channels.map((c) => (
          <label key={c.id} className="check">
            <input
              type="checkbox"
              checked={form.channels.includes(c.id)}
              onChange={(e) => setForm({ ...form, channels: e.target.checked ? [...form.channels, c.id] : form.channels.filter((id) => id !== c.id) })}
            />
            {c.name}
          </label>
        ))}
      </fieldset>
      <FieldError error={error} path="channels" id="feed-channels-error" />
      <label>
        {t('feeds.template')}
        <textarea
          rows={4}
          value={form.template}
          onChange={(e) => setForm({ ...form, template: e.target.value })}
          aria-describedby="feed-template-help feed-template-error"
        />
      </label>
      <p className="hint" id="feed-template-help">
        {t('feeds.templateHelp')}
      </p>
      <FieldError error={error} path="template" id="feed-template-error" />
      <fieldset>
        <legend>{t('feeds.when')}</legend>
        {MODES.map(([mode, label]) => (
          <label key={mode} className="check">
            <input type="radio" name="feed-mode" checked={form.mode === mode} onChange={() => setForm({ ...form, mode })} />
            {t(label)}
          </label>
        ))}
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={form.attachImage} onChange={(e) => setForm({ ...form, attachImage: e.target.checked })} />
        {t('feeds.attachImage')}
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          {existing ? t('common.save') : t('feeds.subscribe')}
        </button>
        <button type="button" onClick={onDone}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
