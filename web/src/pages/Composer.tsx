/**
 * Writing a post: channels, a shared text (or one per channel), thread items
 * with their delay, media, each network's settings, a live check against each
 * network's rules with a preview, and when to publish. Saved in this browser
 * as the person types, so closing the tab loses nothing. The draft, its
 * changes and the requests it makes are in web/src/composer/; this page loads
 * what the form starts from and saves.
 */
import { useMemo, useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, pub, type Channel, type Network } from '../api.ts';
import { keys, useChannels, useNetworks, useSession } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { ErrorNote, FormErrorNote, Loading, Notice } from '../components/ui.tsx';
import { blankDraft, isRepeating, itemsOf, type Draft } from '../composer/draft.ts';
import { draftStorageKey, type DraftOwner } from '../composer/draft-storage.ts';
import { fromPost, fromSeries } from '../composer/from-saved.ts';
import { composerRequests } from '../composer/request.ts';
import { useComposerDraft } from '../composer/useComposerDraft.ts';
import { useNextSlot } from '../composer/useNextSlot.ts';
import { ChannelPicker } from '../composer/ChannelPicker.tsx';
import { ChannelPanel } from '../composer/ChannelPanel.tsx';
import { PreviewPanel } from '../composer/PreviewPanel.tsx';
import { TextPicker } from '../composer/TextPicker.tsx';
import { ThreadEditor } from '../composer/ThreadEditor.tsx';
import { WhenFields } from '../composer/WhenFields.tsx';
import { seriesKeys } from './Series.tsx';

export function Composer() {
  const { id, seriesId } = useParams();
  const [params] = useSearchParams();
  const from = params.get('from') ?? undefined;
  const source = id ?? from;
  const post = useQuery({ queryKey: keys.post(source ?? ''), queryFn: () => api('GET', pub(`/posts/${source}`)), enabled: !!source });
  const series = useQuery({
    queryKey: seriesKeys.one(seriesId ?? ''),
    queryFn: () => api('GET', pub(`/series/${seriesId}`)),
    enabled: !!seriesId,
    // Opened once to edit: live updates of its occurrences must not reset the form.
    staleTime: Infinity,
  });
  const channels = useChannels();
  const networks = useNetworks();
  const prefs = usePrefs();
  const session = useSession();
  if (channels.isPending || networks.isPending || (source && post.isPending) || (seriesId && series.isPending)) return <Loading />;
  const error = channels.error ?? networks.error ?? post.error ?? series.error;
  if (error) return <ErrorNote error={error} onRetry={() => void Promise.all([channels.refetch(), networks.refetch(), post.refetch(), series.refetch()])} />;
  const start = series.data ? fromSeries(series.data) : post.data ? fromPost(post.data, prefs.zone, !!id) : blankDraft(prefs.zone);
  // The sign-in gate has the session before any page shows.
  const owner: DraftOwner = { account: session.data!.account.id, user: session.data!.user.id };
  const storage = draftStorageKey(owner, seriesId ? `series-${seriesId}` : id);
  // Copying a post starts from that post, not from a draft left earlier.
  const saved = from && !id && !seriesId ? undefined : storage;
  return (
    <ComposerForm
      key={seriesId ?? source ?? 'new'}
      editing={id}
      editingSeries={seriesId}
      start={start}
      channels={channels.data!}
      networks={networks.data!}
      restoreFrom={saved}
      storage={storage}
    />
  );
}

/** The submit button's words: what saving will do. */
function submitLabel(draft: Draft, editing: boolean): MessageKey {
  if (isRepeating(draft, editing)) return 'series.submit';
  if (editing) return 'composer.submitUpdate';
  if (draft.when === 'now') return 'composer.submitNow';
  if (draft.when === 'draft') return 'composer.submitDraft';
  return 'composer.submitSchedule';
}

/** What the page opened after saving confirms: an edit is not a new post, and several channels make several posts. */
function savedNotice(count: number, editing: boolean): string {
  if (editing) return t('composer.updated');
  return count === 1 ? t('composer.createdOne') : t('composer.createdMany', { count });
}

function titleOf(editing: boolean, editingSeries: boolean): MessageKey {
  if (editingSeries) return 'series.editTitle';
  return editing ? 'composer.edit' : 'composer.new';
}

function ComposerForm({
  editing,
  editingSeries,
  start,
  channels,
  networks,
  restoreFrom,
  storage,
}: {
  editing?: string;
  /** Editing a repeating post: saved with PUT /series/{id}. */
  editingSeries?: string;
  start: Draft;
  channels: Channel[];
  networks: Network[];
  restoreFrom?: string;
  /** Where the draft is saved as the person types (theirs, in this account). */
  storage: string;
}) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const networkOf = useMemo(() => new Map(networks.map((n) => [n.identifier, n])), [networks]);
  const channelById = useMemo(() => new Map(channels.map((c) => [c.id, c])), [channels]);
  const composer = useComposerDraft({
    start,
    restoreFrom,
    storage,
    single: !!editing,
    defaultsOf: (cid) => channelById.get(cid)?.defaultSettings ?? {},
  });
  const { draft } = composer;
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const slot = useNextSlot(draft.channels, draft.when === 'slot', setError);
  const selected = draft.channels.map((cid) => channelById.get(cid)).filter((c): c is Channel => !!c);
  const entryIndex = (cid: string) => selected.findIndex((c) => c.id === cid);

  const submit = async () => {
    setError(undefined);
    if (draft.channels.length === 0)
      return setError(new ApiError(400, 'invalid', t('composer.pickChannel'), [{ path: 'posts', message: t('composer.pickChannel') }]));
    const request = composerRequests(draft, selected, { editing, slot });
    setBusy(true);
    try {
      // Alt texts are saved on the files first, so the networks that take them get them.
      await Promise.all(request.altTexts.map(([mediaId, alt]) => api('PATCH', `/media/${mediaId}`, { alt })));
      const save = request.save;
      if (save.to === 'series') {
        if (!save.body) throw new ApiError(400, 'invalid', t('series.pickStart'), [{ path: 'repeat.start', message: t('series.pickStart') }]);
        const saved = editingSeries ? await api('PUT', pub(`/series/${editingSeries}`), save.body) : await api('POST', pub('/series'), save.body);
        localStorage.removeItem(storage);
        void client.invalidateQueries({ queryKey: keys.posts });
        navigate(`/series/${saved.id}`, { state: { notice: t('series.saved') } });
        return;
      }
      const created = await api('POST', pub('/posts'), save.body);
      if (save.thenDraft) await api('PUT', pub(`/posts/${editing}/status`), { status: 'draft' });
      localStorage.removeItem(storage);
      void client.invalidateQueries({ queryKey: keys.posts });
      navigate(created.length === 1 ? `/posts/${created[0]!.postId}` : '/', { state: { notice: savedNotice(created.length, !!editing) } });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

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
        <h1>{t(titleOf(!!editing, !!editingSeries))}</h1>
        <small className="hint">{t('composer.saved')}</small>
      </div>
      {composer.restored && (
        <Notice>
          {t('composer.restored')}{' '}
          <button type="button" onClick={composer.discard}>
            {t('composer.discard')}
          </button>
        </Notice>
      )}

      <ChannelPicker channels={channels} networkOf={networkOf} chosen={draft.channels} onToggle={composer.toggleChannel} error={error} />

      <div className="composer-body">
        <div className="composer-main">
          <TextPicker
            onTemplate={(text) => composer.updateFirst((content) => (content.trim() ? `${content}\n\n${text}` : text))}
            onSignature={(text) => composer.updateFirst((content) => `${content.trimEnd()}\n\n${text}`)}
          />
          <ThreadEditor
            title={t('composer.content')}
            owner={null}
            items={draft.shared}
            updateItem={composer.updateItem}
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
            return (
              <ChannelPanel
                key={c.id}
                channel={c}
                network={network}
                items={itemsOf(draft, c.id)}
                adjusted={!!draft.custom[c.id]}
                settings={draft.settings[c.id] ?? {}}
                at={`posts.${entryIndex(c.id)}`}
                error={error}
                updateItem={composer.updateItem}
                onFix={(item, fix) => composer.applyFix(c, network, item, fix)}
                onAdjust={() => composer.adjust(c.id)}
                onUseShared={() => composer.backToShared(c.id)}
                onSettings={(value) => composer.setSettings(c.id, value)}
              />
            );
          })}
        </div>
        <PreviewPanel draft={draft} selected={selected} networkOf={networkOf} slot={slot} editing={editing} />
      </div>

      <WhenFields
        draft={draft}
        editing={!!editing}
        editingSeries={!!editingSeries}
        slot={slot}
        error={error}
        update={composer.update}
        changeZone={composer.changeZone}
        changeRepeat={composer.changeRepeat}
      />

      {error instanceof ApiError && error.fields.length > 0 ? (
        <FormErrorNote error={error} />
      ) : (
        error instanceof Error && <ErrorNote error={new Error(t('composer.fixErrors', { message: error.message }))} />
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t('common.saving') : t(submitLabel(draft, !!editing))}
        </button>
      </div>
    </form>
  );
}
