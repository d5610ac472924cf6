/**
 * Approvals in the web application: a post's approval mark, the decision of an
 * owner or admin on the post page with the post's history, the team's comments,
 * the preview links that show the post to a client, and the account's setting.
 */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, pub, type CreatedPreviewLink, type PostApproval, type PostDetail } from '../api.ts';
import { keys, useAction, useNetworks, useSession } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { DeleteButton, ErrorNote, FieldError, Notice, Secret } from './ui.tsx';

type Approval = NonNullable<PostApproval['state']>;

export function ApprovalBadge({ approval }: { approval: Approval }) {
  return <span className={`state state-approval-${approval}`}>{t(`approval.${approval}`)}</span>;
}

const HISTORY_WORDS = {
  requested: 'approval.requested',
  approved: 'approval.decidedApproved',
  rejected: 'approval.decidedRejected',
  client_approved: 'approval.clientApproved',
  changes_requested: 'approval.changesRequested',
} as const;

/** Where the post stands with its reviewers; an owner or admin approves it or returns it with a comment. */
export function ApprovalPanel({ post }: { post: PostDetail }) {
  const session = useSession();
  const prefs = usePrefs();
  const status = useQuery({ queryKey: [...keys.post(post.id), 'approval'], queryFn: () => api('GET', pub(`/posts/${post.id}/approval`)) });
  const { error, setError, act } = useAction(keys.posts);
  const [comment, setComment] = useState('');
  const [notice, setNotice] = useState<string>();
  if (!status.data) return <ErrorNote error={status.error} onRetry={() => status.refetch()} />;
  const a = status.data;
  if (a.state === null && a.history.length === 0) return null;
  const reviewer = session.data?.permissions.reviewPosts;
  const latest = (action: string) => a.history.filter((h) => h.action === action).at(-1);
  const decide = async (action: 'approve' | 'reject') => {
    setNotice(undefined);
    // One call per action: the route table names each path (and its body) on its own; a rejection always says why.
    const send = () =>
      action === 'approve'
        ? api('POST', pub(`/posts/${post.id}/approve`), comment.trim() ? { comment } : {})
        : api('POST', pub(`/posts/${post.id}/reject`), { comment });
    const done = await act(send);
    if (!done) return;
    setComment('');
    setError(undefined);
    setNotice(action === 'approve' ? t('approval.approvedNotice', { when: formatWhen(done.publishDate, prefs) }) : t('approval.rejectedNotice'));
  };
  return (
    <section className="panel approval" aria-labelledby="approval-title" data-testid="approval">
      <h2 id="approval-title">
        {t('approval.title')} {a.state && <ApprovalBadge approval={a.state} />}
      </h2>
      {notice && <Notice kind="success">{notice}</Notice>}
      {a.state === 'pending' && (
        <p>
          {t('approval.askedBy', { name: a.requestedBy?.name ?? '' })} {reviewer && <strong>{t('approval.waitingYou')}</strong>}
        </p>
      )}
      {a.state === 'rejected' && (
        <Notice kind="warning">{t('approval.returnedBy', { name: latest('rejected')?.by.name ?? '', comment: latest('rejected')?.comment ?? '' })}</Notice>
      )}
      {a.state === 'approved' && <p>{t('approval.approvedBy', { name: latest('approved')?.by.name ?? '' })}</p>}
      {reviewer && (a.state === 'pending' || a.state === 'rejected') && (
        <form onSubmit={(e) => e.preventDefault()}>
          <label>
            {t('approval.comment')}
            <textarea value={comment} rows={2} onChange={(e) => setComment(e.target.value)} aria-describedby="approval-comment-error" />
          </label>
          <FieldError error={error} path="comment" id="approval-comment-error" />
          <div className="row">
            <button type="button" className="primary" onClick={() => decide('approve')}>
              {t('approval.approve')}
            </button>
            {a.state === 'pending' && (
              <button type="button" className="danger" onClick={() => decide('reject')}>
                {t('approval.reject')}
              </button>
            )}
          </div>
        </form>
      )}
      <ErrorNote error={error} />
      {a.history.length > 0 && (
        <>
          <h3>{t('approval.history')}</h3>
          <ol className="history">
            {a.history.map((h) => (
              <li key={h.id}>
                {t(HISTORY_WORDS[h.action], { name: h.by.name })} <small>{formatWhen(h.at, prefs)}</small>
                {h.comment && <q className="content">{h.comment}</q>}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** The team's discussion of a post, with what visitors of its preview links wrote. */
export function CommentsPanel({ postId }: { postId: string }) {
  const session = useSession();
  const prefs = usePrefs();
  const list = useQuery({
    queryKey: [...keys.post(postId), 'comments'],
    queryFn: () => api('GET', pub(`/posts/${postId}/comments`)),
  });
  const { error, act } = useAction(keys.posts);
  const [text, setText] = useState('');
  const moderator = session.data?.permissions.reviewPosts;
  return (
    <section className="panel" aria-labelledby="comments-title">
      <h2 id="comments-title">{t('comments.title')}</h2>
      <ErrorNote error={list.error} onRetry={() => list.refetch()} />
      {list.data?.comments.length === 0 && <p>{t('comments.none')}</p>}
      <ul className="comments">
        {list.data?.comments.map((c) => (
          <li key={c.id} className="comment" data-testid={`comment-${c.id}`}>
            <div className="row">
              <strong>{c.by.name}</strong>
              {c.viaPreviewLink && <span className="tag">{t('comments.viaLink')}</span>}
              <small>{formatWhen(c.at, prefs)}</small>
              {(c.own || moderator) && (
                <DeleteButton
                  name={c.content.slice(0, 40)}
                  question={t('comments.confirmDelete')}
                  onConfirm={() => act(() => api('DELETE', pub(`/posts/${postId}/comments/${c.id}`)))}
                />
              )}
            </div>
            <p className="content">{c.content}</p>
          </li>
        ))}
      </ul>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await act(() => api('POST', pub(`/posts/${postId}/comments`), { content: text }))) setText('');
        }}
      >
        <label>
          {t('comments.add')}
          <textarea value={text} rows={3} onChange={(e) => setText(e.target.value)} aria-describedby="comment-error" />
        </label>
        <FieldError error={error} path="content" id="comment-error" />
        <button type="submit">{t('comments.send')}</button>
      </form>
    </section>
  );
}

const LINK_HOURS = [
  [24, 'links.day'],
  [168, 'links.week'],
  [720, 'links.month'],
] as const;

/** Links that show the post to someone without an account; the address is shown once, when made. */
export function PreviewLinksPanel({ post }: { post: PostDetail }) {
  const prefs = usePrefs();
  const networks = useNetworks();
  const links = useQuery({ queryKey: [...keys.post(post.id), 'links'], queryFn: () => api('GET', pub(`/posts/${post.id}/preview-links`)) });
  const { error, act } = useAction(keys.posts);
  const [hours, setHours] = useState(168);
  const [made, setMade] = useState<CreatedPreviewLink>();
  const network = networks.data?.find((n) => n.identifier === post.integration.providerIdentifier)?.name ?? post.integration.providerIdentifier;
  return (
    <section className="panel" aria-labelledby="links-title">
      <h2 id="links-title">{t('links.title')}</h2>
      <p className="hint">{t('links.intro', { network })}</p>
      {made && <Secret label={t('links.made')} value={made.url} />}
      <form
        className="row"
        onSubmit={async (e) => {
          e.preventDefault();
          const link = await act(() => api('POST', pub(`/posts/${post.id}/preview-links`), { expiresInHours: hours }));
          if (link) setMade(link);
        }}
      >
        <label className="inline">
          {t('links.expiresIn')}
          <select value={hours} onChange={(e) => setHours(Number(e.target.value))} aria-describedby="links-error">
            {LINK_HOURS.map(([value, label]) => (
              <option key={value} value={value}>
                {t(label)}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t('links.create')}</button>
      </form>
      <FieldError error={error} path="expiresInHours" id="links-error" />
      <ErrorNote error={links.error ?? error} />
      {links.data?.length === 0 && <p>{t('links.none')}</p>}
      <ul className="links">
        {links.data?.map((l) => (
          <li key={l.id} className="row" data-testid={`link-${l.id}`}>
            <span>{t('links.state', { state: t(`links.${l.state}`), when: formatWhen(l.expiresAt, prefs) })}</span>
            {l.state === 'active' && (
              <DeleteButton
                name={t('links.title')}
                label={t('links.revoke')}
                onConfirm={() => act(() => api('DELETE', pub(`/posts/${post.id}/preview-links/${l.id}`)))}
              />
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Settings, Team: whether members' posts wait for approval (owners and admins decide; members see it). */
export function ApprovalSetting() {
  const session = useSession();
  const setting = useQuery({ queryKey: ['approval-settings'], queryFn: () => api('GET', pub('/approval-settings')) });
  const { error, act } = useAction(['approval-settings']);
  const [saved, setSaved] = useState(false);
  if (!setting.data) return <ErrorNote error={setting.error} onRetry={() => setting.refetch()} />;
  return (
    <fieldset>
      <legend>{t('approval.title')}</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={setting.data.membersNeedApproval}
          disabled={!session.data?.permissions.reviewPosts}
          aria-describedby="approval-setting-help"
          onChange={async (e) => {
            const value = e.target.checked;
            setSaved(false);
            setSaved((await act(() => api('PUT', pub('/approval-settings'), { membersNeedApproval: value }))) !== undefined);
          }}
        />
        {t('approval.setting')}
      </label>
      <p className="hint" id="approval-setting-help">
        {t('approval.settingHelp')}
      </p>
      {saved && <Notice kind="success">{t('approval.settingSaved')}</Notice>}
      <ErrorNote error={error} />
    </fieldset>
  );
}
