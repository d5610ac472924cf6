/**
 * Writing a post: channels, a shared text (or one per channel), thread items
 * with their delay, media, each network's settings, a live check against each
 * network's rules with a preview, and when to publish. Saved in this browser
 * as the person types, so closing the tab loses nothing.
 */
import { memo, useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, pub, type Channel, type Network, type PostDetail, type SeriesDetail, type Template } from '../api.ts';
import { keys, useChannels, useNetworks, useTemplates } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { fromLocalInput, toLocalInput } from '../wall-clock.ts';
import { checkItems, cutTo, splitToFit, type Fix, type ItemDraft } from '../composer-rules.ts';
import { Avatar, ErrorNote, FieldError, Loading, Notice, problemsAt, ZoneSelect } from '../components/ui.tsx';
import { fromRef, ItemMedia } from '../components/MediaPicker.tsx';
import { SchemaFields } from '../components/SettingsForm.tsx';
import { Preview } from '../components/Preview.tsx';
import { RepeatFields } from '../components/Repeat.tsx';
import { fromRule, noRepeat, repeatBody, weekdayOf, type RepeatDraft } from '../composer/repeat-draft.ts';
import { seriesKeys } from './Series.tsx';

type When = 'at' | 'slot' | 'now' | 'draft';

export interface Draft {
  channels: string[];
  shared: ItemDraft[];
  /** Channels whose text was adjusted: their own items. */
  custom: Record<string, ItemDraft[]>;
  settings: Record<string, Record<string, unknown>>;
  when: When;
  local: string;
  zone: string;
  shortLink: boolean;
  /** Editing: the post's group. */
  group?: string;
  /** Repeating (POST /series instead of /posts); absent in drafts saved before repeating posts. */
  repeat?: RepeatDraft;
}

const emptyItem = (): ItemDraft => ({ content: '', media: [], delay: 0 });

function blank(zone: string): Draft {
  return {
    channels: [],
    shared: [emptyItem()],
    custom: {},
    settings: {},
    when: 'at',
    local: toLocalInput(Date.now() + 3_600_000, zone),
    zone,
    shortLink: false,
    repeat: noRepeat(),
  };
}

function fromPost(post: PostDetail, zone: string, editing: boolean): Draft {
  const { __type: _, ...settings } = post.settings;
  return {
    ...blank(zone),
    channels: [post.integration.id],
    shared: post.thread.map((item) => ({
      content: item.content,
      delay: item.delay,
      media: item.image.map(fromRef),
    })),
    settings: { [post.integration.id]: settings },
    when: post.state === 'DRAFT' ? 'draft' : 'at',
    local: toLocalInput(Math.max(Date.parse(post.publishDate), editing ? 0 : Date.now() + 3_600_000), zone),
    group: editing ? post.group : undefined,
  };
}

/** A series being edited: its post (one text, or one per channel when they differ), settings and rule. */
function fromSeries(series: SeriesDetail): Draft {
  const zone = series.repeat.timezone;
  const items = (cid: string) =>
    (series.posts.find((p) => p.integration.id === cid)?.value ?? []).map((v) => ({ content: v.content, delay: v.delay, media: v.image.map(fromRef) }));
  const [first] = series.posts;
  const shared = first ? items(first.integration.id) : [emptyItem()];
  const same = (cid: string) => JSON.stringify(items(cid)) === JSON.stringify(shared);
  return {
    ...blank(zone),
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

/** The key this draft is kept under in the browser. */
const storageKey = (id?: string) => `herald.composer.${id ?? 'new'}`;

export function Composer() {
  const { id, seriesId } = useParams();
  const [params] = useSearchParams();
  const from = params.get('from') ?? undefined;
  const source = id ?? from;
  const post = useQuery({ queryKey: keys.post(source ?? ''), queryFn: () => api<PostDetail>('GET', pub(`/posts/${source}`)), enabled: !!source });
  const series = useQuery({
    queryKey: seriesKeys.one(seriesId ?? ''),
    queryFn: () => api<SeriesDetail>('GET', pub(`/series/${seriesId}`)),
    enabled: !!seriesId,
    // Opened once to edit: live updates of its occurrences must not reset the form.
    staleTime: Infinity,
  });
  const channels = useChannels();
  const networks = useNetworks();
  const prefs = usePrefs();
  if (channels.isPending || networks.isPending || (source && post.isPending) || (seriesId && series.isPending)) return <Loading />;
  const error = channels.error ?? networks.error ?? post.error ?? series.error;
  if (error) return <ErrorNote error={error} onRetry={() => void Promise.all([channels.refetch(), networks.refetch(), post.refetch(), series.refetch()])} />;
  const start = series.data ? fromSeries(series.data) : post.data ? fromPost(post.data, prefs.zone, !!id) : blank(prefs.zone);
  const saved = seriesId ? storageKey(`series-${seriesId}`) : id ? storageKey(id) : from ? undefined : storageKey();
  return (
    <ComposerForm
      key={seriesId ?? source ?? 'new'}
      editing={id}
      editingSeries={seriesId}
      start={start}
      channels={channels.data!}
      networks={networks.data!}
      restoreFrom={saved}
    />
  );
}

function ComposerForm({
  editing,
  editingSeries,
  start,
  channels,
  networks,
  restoreFrom,
}: {
  editing?: string;
  /** Editing a repeating post: saved with PUT /series/{id}. */
  editingSeries?: string;
  start: Draft;
  channels: Channel[];
  networks: Network[];
  restoreFrom?: string;
}) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const prefs = usePrefs();
  const [restored, setRestored] = useState(false);
  const [draft, setDraft] = useState<Draft>(() => {
    const saved = restoreFrom ? localStorage.getItem(restoreFrom) : null;
    if (saved) {
      try {
        const parsed = JSON.parse(saved) as Draft;
        if (parsed.shared.some((i) => i.content || i.media.length) || parsed.channels.length) {
          setTimeout(() => setRestored(true));
          return parsed;
        }
      } catch {
        // An unreadable saved draft is dropped.
      }
    }
    return start;
  });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [slot, setSlot] = useState<string>();
  const storage = editingSeries ? storageKey(`series-${editingSeries}`) : editing ? storageKey(editing) : storageKey();
  const repeat = draft.repeat ?? noRepeat();
  // A repeating post is planned at a date and time; a single post being edited stays one.
  const repeating = !editing && draft.when === 'at' && repeat.on;

  // Saved as the person types; removed once the post is stored.
  useEffect(() => {
    localStorage.setItem(storage, JSON.stringify(draft));
  }, [draft, storage]);

  const networkOf = useMemo(() => new Map(networks.map((n) => [n.identifier, n])), [networks]);
  const channelById = useMemo(() => new Map(channels.map((c) => [c.id, c])), [channels]);
  const selected = draft.channels.map((cid) => channelById.get(cid)).filter((c): c is Channel => !!c);
  const itemsOf = (cid: string) => draft.custom[cid] ?? draft.shared;

  const groups = useMemo(() => {
    const byCustomer = new Map<string, Channel[]>();
    for (const c of channels) byCustomer.set(c.customer?.name ?? '', [...(byCustomer.get(c.customer?.name ?? '') ?? []), c]);
    return [...byCustomer.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)));
  }, [channels]);

  const update = (change: Partial<Draft>) => setDraft((d) => ({ ...d, ...change }));
  const updateFirst = (change: (content: string) => string) =>
    setDraft((d) => ({ ...d, shared: d.shared.map((item, i) => (i === 0 ? { ...item, content: change(item.content) } : item)) }));
  // The same wall-clock time in the newly chosen zone.
  const changeZone = useCallback(
    (zone: string) => setDraft((d) => ({ ...d, zone, local: toLocalInput(fromLocalInput(d.local, d.zone) ?? Date.now(), zone) })),
    [],
  );
  const setItems = (cid: string | null, items: ItemDraft[]) =>
    setDraft((d) => (cid === null ? { ...d, shared: items } : { ...d, custom: { ...d.custom, [cid]: items } }));
  // Changes one item (an index past the end adds one; null removes it). Stable, so unchanged items skip rendering.
  const updateItem = useCallback<UpdateItem>(
    (owner, index, change) =>
      setDraft((d) => {
        const items = owner === null ? d.shared : (d.custom[owner] ?? d.shared);
        const next =
          change === null
            ? items.filter((_, j) => j !== index)
            : index >= items.length
              ? [...items, { ...emptyItem(), ...change }]
              : items.map((item, j) => (j === index ? { ...item, ...change } : item));
        return owner === null ? { ...d, shared: next } : { ...d, custom: { ...d.custom, [owner]: next } };
      }),
    [],
  );
  // A channel picked for the first time brings its default settings.
  const toggleChannel = (cid: string) =>
    setDraft((d) => ({
      ...d,
      channels: d.channels.includes(cid) ? d.channels.filter((x) => x !== cid) : editing ? [cid] : [...d.channels, cid],
      settings: d.settings[cid] ? d.settings : { ...d.settings, [cid]: { ...(channelById.get(cid)?.defaultSettings ?? {}) } },
    }));

  const applyFix = (channel: Channel, network: Network, item: number, fix: Fix) => {
    const items = itemsOf(channel.id);
    if (fix === 'drop') return toggleChannel(channel.id);
    const text = items[item]!.content;
    const replacement =
      fix === 'split'
        ? splitToFit(network, text).map((content, i) => (i === 0 ? { ...items[item]!, content } : { ...emptyItem(), content }))
        : [{ ...items[item]!, content: cutTo(network, text, network.rules.maxLength) }];
    setItems(channel.id, [...items.slice(0, item), ...replacement, ...items.slice(item + 1)]);
  };

  // The first selected channel's next free slot, when that is the choice.
  useEffect(() => {
    if (draft.when !== 'slot' || !draft.channels[0]) return;
    let current = true;
    api<{ date: string }>('GET', pub(`/find-slot/${draft.channels[0]}`))
      .then((r) => current && setSlot(r.date))
      .catch((err) => current && setError(err));
    return () => {
      current = false;
    };
  }, [draft.when, draft.channels]);

  const submit = async () => {
    setError(undefined);
    if (draft.channels.length === 0)
      return setError(new ApiError(400, 'invalid', t('composer.pickChannel'), [{ path: 'posts', message: t('composer.pickChannel') }]));
    const date = draft.when === 'at' ? fromLocalInput(draft.local, draft.zone) : draft.when === 'slot' ? (slot ? Date.parse(slot) : undefined) : undefined;
    const type = editing ? 'update' : draft.when === 'draft' ? 'draft' : draft.when === 'now' ? 'now' : 'schedule';
    const entries = selected.map((c) => ({
      integration: { id: c.id },
      ...(draft.group ? { group: draft.group } : {}),
      value: itemsOf(c.id).map((item) => ({ content: item.content, delay: item.delay, image: item.media.map((m) => ({ id: m.id, path: m.path })) })),
      settings: { __type: c.identifier, ...(draft.settings[c.id] ?? {}) },
    }));
    const body = {
      type,
      ...(date !== undefined && draft.when !== 'now' ? { date: new Date(date).toISOString() } : {}),
      shortLink: draft.shortLink,
      posts: entries,
    };
    setBusy(true);
    try {
      // Alt texts are saved on the files first, so the networks that take them get them.
      const withAlt = new Map(
        selected
          .flatMap((c) => itemsOf(c.id).flatMap((i) => i.media))
          .filter((m) => m.alt)
          .map((m) => [m.id, m.alt]),
      );
      await Promise.all([...withAlt].map(([mediaId, alt]) => api('PATCH', `/media/${mediaId}`, { alt })));
      if (repeating) {
        if (date === undefined) throw new ApiError(400, 'invalid', t('series.pickStart'), [{ path: 'repeat.start', message: t('series.pickStart') }]);
        const series = { name: repeat.name.trim() || undefined, repeat: repeatBody(repeat, date, draft.zone), shortLink: draft.shortLink, posts: entries };
        const saved = editingSeries
          ? await api<{ id: string }>('PUT', pub(`/series/${editingSeries}`), series)
          : await api<{ id: string }>('POST', pub('/series'), series);
        localStorage.removeItem(storage);
        void client.invalidateQueries({ queryKey: keys.posts });
        navigate(`/series/${saved.id}`, { state: { notice: t('series.saved') } });
        return;
      }
      const created = await api<{ postId: string }[]>('POST', pub('/posts'), body);
      if (editing && draft.when === 'draft') await api('PUT', pub(`/posts/${editing}/status`), { status: 'draft' });
      localStorage.removeItem(storage);
      void client.invalidateQueries({ queryKey: keys.posts });
      navigate(created.length === 1 ? `/posts/${created[0]!.postId}` : '/', { state: { notice: t('composer.created', { count: created.length }) } });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const entryIndex = (cid: string) => selected.findIndex((c) => c.id === cid);
  const submitLabel = repeating
    ? t('series.submit')
    : editing
      ? t('composer.submitUpdate')
      : draft.when === 'now'
        ? t('composer.submitNow')
        : draft.when === 'draft'
          ? t('composer.submitDraft')
          : t('composer.submitSchedule');

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      noValidate
    >
      <div className="page-head">
        <h1>{editingSeries ? t('series.editTitle') : editing ? t('composer.edit') : t('composer.new')}</h1>
        <small className="hint">{t('composer.saved')}</small>
      </div>
      {restored && (
        <Notice>
          {t('composer.restored')}{' '}
          <button
            type="button"
            onClick={() => {
              setDraft(start);
              setRestored(false);
            }}
          >
            {t('composer.discard')}
          </button>
        </Notice>
      )}

      <fieldset>
        <legend>{t('composer.channels')}</legend>
        {channels.length === 0 && (
          <p>
            {t('calendar.emptyBody')} <Link to="/channels">{t('calendar.connect')}</Link>
          </p>
        )}
        {groups.map(([customer, list]) => (
          <div key={customer} className="channel-group">
            <h3>{customer || t('composer.noCustomer')}</h3>
            <div className="channel-chips">
              {list.map((c) => (
                <label key={c.id} className={`chip${draft.channels.includes(c.id) ? ' on' : ''}${c.disabled ? ' off' : ''}`}>
                  <input
                    type="checkbox"
                    checked={draft.channels.includes(c.id)}
                    onChange={() => toggleChannel(c.id)}
                    disabled={c.disabled && !draft.channels.includes(c.id)}
                  />
                  <Avatar src={c.picture} name={c.name} size={22} />
                  <span>
                    {c.name} <small>{networkOf.get(c.identifier)?.name ?? c.identifier}</small>
                  </span>
                </label>
              ))}
            </div>
          </div>
        ))}
        <FieldError error={error} path="posts" />
      </fieldset>

      <div className="composer-body">
        <div className="composer-main">
          <TextPicker
            onTemplate={(text) => updateFirst((content) => (content.trim() ? `${content}\n\n${text}` : text))}
            onSignature={(text) => updateFirst((content) => `${content.trimEnd()}\n\n${text}`)}
          />
          <ThreadEditor
            title={t('composer.content')}
            owner={null}
            items={draft.shared}
            updateItem={updateItem}
            idPrefix="shared"
            error={error}
            errorPaths={selected
              .filter((c) => !draft.custom[c.id])
              .map((c) => `posts.${entryIndex(c.id)}.value`)
              .join(' ')}
          />
          {selected.map((c) => {
            const network = networkOf.get(c.identifier);
            if (!network) return null;
            const items = itemsOf(c.id);
            const check = checkItems(network, items);
            const at = `posts.${entryIndex(c.id)}`;
            return (
              <section key={c.id} className="per-channel" aria-label={network.name + ': ' + c.name}>
                <h2>
                  <Avatar src={c.picture} name={c.name} size={22} /> {c.name} <small>{network.name}</small>
                </h2>
                <ul className="counts">
                  {(network.rules.threads ? items : items.slice(0, 1)).map((_, i) => (
                    <li key={i} className={check.counts[i]! > network.rules.maxLength ? 'over' : ''} data-testid={`count-${c.id}-${i}`}>
                      {i === 0 ? t('composer.firstItem') : t('composer.reply', { n: i })}:{' '}
                      {t('composer.count', { count: check.counts[i]!, max: network.rules.maxLength })}
                    </li>
                  ))}
                </ul>
                {check.warnings.map((w) => (
                  <Notice key={w} kind="warning">
                    {w}
                  </Notice>
                ))}
                {check.problems.map((p, i) => (
                  <div key={i} className="note note-warning" role="status">
                    {p.message}{' '}
                    {p.fixes.map((fix) => (
                      <button key={fix} type="button" onClick={() => applyFix(c, network, p.item, fix)}>
                        {fix === 'split'
                          ? t('composer.split')
                          : fix === 'shorten'
                            ? t('composer.shorten', { max: network.rules.maxLength })
                            : t('composer.drop', { name: network.name })}
                      </button>
                    ))}
                  </div>
                ))}
                {draft.custom[c.id] ? (
                  <>
                    <ThreadEditor
                      title={t('composer.adjusting', { name: c.name })}
                      owner={c.id}
                      items={items}
                      updateItem={updateItem}
                      idPrefix={`custom-${c.id}`}
                      error={error}
                      errorPaths={`${at}.value`}
                    />
                    <button
                      type="button"
                      onClick={() =>
                        setDraft((d) => {
                          const { [c.id]: _, ...rest } = d.custom;
                          return { ...d, custom: rest };
                        })
                      }
                    >
                      {t('composer.useShared')}
                    </button>
                  </>
                ) : (
                  <button type="button" onClick={() => setItems(c.id, structuredClone(draft.shared))}>
                    {t('composer.adjustFor', { name: c.name })}
                  </button>
                )}
                {network.settings.properties && Object.keys(network.settings.properties).length > 0 && (
                  <details open={problemsAt(error, `${at}.settings`).length > 0}>
                    <summary>{t('composer.settings', { name: network.name })}</summary>
                    <SchemaFields
                      schema={network.settings}
                      value={draft.settings[c.id] ?? {}}
                      onChange={(value) => setDraft((d) => ({ ...d, settings: { ...d.settings, [c.id]: value } }))}
                      idPrefix={`settings-${c.id}`}
                      error={error}
                      errorPath={`${at}.settings`}
                    />
                  </details>
                )}
                <FieldError error={error} path={`${at}.integration`} />
                <details className="preview-box">
                  <summary>{t('composer.previewFor', { name: network.name })}</summary>
                  <Preview channel={c} network={network} items={items} />
                </details>
              </section>
            );
          })}
        </div>
      </div>

      <fieldset className="when">
        <legend>{t('composer.when')}</legend>
        {(['at', 'slot', 'now', 'draft'] as const).map((w) => (
          <label key={w} className="check">
            <input
              type="radio"
              name="when"
              value={w}
              checked={draft.when === w}
              onChange={() => update({ when: w })}
              disabled={(!!editing && (w === 'now' || w === 'slot')) || (!!editingSeries && w !== 'at')}
            />
            {t(w === 'at' ? 'composer.at' : w === 'slot' ? 'composer.nextSlot' : w === 'now' ? 'composer.now' : 'composer.draft')}
          </label>
        ))}
        {(draft.when === 'at' || draft.when === 'draft') && (
          <div className="row">
            <label>
              {t('composer.date')}
              <input type="datetime-local" value={draft.local} onChange={(e) => update({ local: e.target.value })} aria-describedby="date-error zone-note" />
            </label>
            <label>
              {t('prefs.zone')}
              <ZoneSelect value={draft.zone} onChange={changeZone} />
            </label>
          </div>
        )}
        <p id="zone-note" className="hint">
          {t('composer.inZone', { zone: draft.zone })}
        </p>
        {draft.when === 'slot' && slot && <p>{t('composer.nextSlotIs', { when: formatWhen(slot, prefs) })}</p>}
        <FieldError error={error} path="date" id="date-error" />
        {!editing && draft.when === 'at' && (
          <RepeatFields
            draft={repeat}
            onChange={(change) => setDraft((d) => ({ ...d, repeat: { ...(d.repeat ?? noRepeat()), ...change } }))}
            zone={draft.zone}
            startDay={weekdayOf(draft.local)}
            error={error}
            locked={!!editingSeries}
          />
        )}
        <label className="check">
          <input type="checkbox" checked={draft.shortLink} onChange={(e) => update({ shortLink: e.target.checked })} />
          {t('composer.shortLinks')}
        </label>
      </fieldset>

      {error instanceof Error && <ErrorNote error={new Error(t('composer.fixErrors', { message: error.message }))} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t('common.saving') : submitLabel}
        </button>
      </div>
    </form>
  );
}

/** The account's templates (a post starts from one) and signatures (added at the end of the post). */
function TextPicker({ onTemplate, onSignature }: { onTemplate: (text: string) => void; onSignature: (text: string) => void }) {
  const templates = useTemplates();
  const of = (kind: Template['kind']) => (templates.data ?? []).filter((x) => x.kind === kind);
  if (!templates.data?.length) return null;
  const picker = (kind: Template['kind'], label: string, use: (text: string) => void) =>
    of(kind).length > 0 && (
      <label className="inline">
        {label}
        <select
          value=""
          onChange={(e) => {
            const chosen = of(kind).find((x) => x.id === e.target.value);
            if (chosen) use(chosen.content);
          }}
        >
          <option value="">{t('composer.choose')}</option>
          {of(kind).map((x) => (
            <option key={x.id} value={x.id}>
              {x.name}
            </option>
          ))}
        </select>
      </label>
    );
  return (
    <div className="row">
      {picker('template', t('composer.useTemplate'), onTemplate)}
      {picker('signature', t('composer.addSignature'), onSignature)}
    </div>
  );
}

type UpdateItem = (owner: string | null, index: number, change: Partial<ItemDraft> | null) => void;

/** One thread (the shared one, or a channel's own): its items, and adding one. */
function ThreadEditor({
  title,
  owner,
  items,
  updateItem,
  idPrefix,
  error,
  errorPaths,
}: {
  title: string;
  owner: string | null;
  items: ItemDraft[];
  updateItem: UpdateItem;
  idPrefix: string;
  error: unknown;
  errorPaths: string;
}) {
  return (
    <fieldset className="thread">
      <legend>{title}</legend>
      {items.map((item, i) => (
        <ThreadItem key={i} owner={owner} index={i} item={item} updateItem={updateItem} idPrefix={`${idPrefix}-${i}`} error={error} errorPaths={errorPaths} />
      ))}
      <button type="button" onClick={() => updateItem(owner, items.length, {})}>
        {t('composer.addItem')}
      </button>
    </fieldset>
  );
}

/** One item of a thread; memoised, so a keystroke renders only the item typed in. */
const ThreadItem = memo(function ThreadItem({
  owner,
  index: i,
  item,
  updateItem,
  idPrefix: id,
  error,
  errorPaths,
}: {
  owner: string | null;
  index: number;
  item: ItemDraft;
  updateItem: UpdateItem;
  idPrefix: string;
  error: unknown;
  errorPaths: string;
}) {
  const onMedia = useCallback((media: ItemDraft['media']) => updateItem(owner, i, { media }), [owner, i, updateItem]);
  return (
    <div className="thread-item">
      <label htmlFor={`${id}-text`}>{i === 0 ? t('composer.firstItem') : t('composer.reply', { n: i })}</label>
      <textarea
        id={`${id}-text`}
        value={item.content}
        rows={i === 0 ? 6 : 3}
        onChange={(e) => updateItem(owner, i, { content: e.target.value })}
        aria-describedby={`${id}-error`}
      />
      <div id={`${id}-error`}>
        {errorPaths
          .split(' ')
          .filter(Boolean)
          .map((p) => (
            <FieldError key={p} error={error} path={`${p}.${i}`} />
          ))}
      </div>
      {i > 0 && (
        <label className="inline">
          {t('composer.delay')}
          <input type="number" min={0} value={item.delay} onChange={(e) => updateItem(owner, i, { delay: Math.max(0, Number(e.target.value) || 0) })} />
        </label>
      )}
      <ItemMedia media={item.media} onChange={onMedia} idPrefix={id} />
      {i > 0 && (
        <button type="button" onClick={() => updateItem(owner, i, null)}>
          {t('common.remove')}
        </button>
      )}
    </div>
  );
});
