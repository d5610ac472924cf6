/**
 * A post shown through a preview link to someone without an account (a
 * client): as its network will show it, with what other visitors said, and a
 * way to comment, approve or ask for changes. The server serves this page only
 * while the link is good; its token is the only credential.
 */
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { previewApi, type Network } from '../api.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { Preview } from '../components/Preview.tsx';
import { ApprovalBadge } from '../components/Approval.tsx';
import { ErrorNote, FieldError, Loading, Notice, StateBadge } from '../components/ui.tsx';

const NAME_KEY = 'herald.preview.name';

const FEEDBACK_WORDS = { comment: 'preview.commented', client_approved: 'preview.approved', changes_requested: 'preview.askedChanges' } as const;

export function PreviewLinkPage() {
  const { token = '' } = useParams();
  const prefs = usePrefs();
  const client = useQueryClient();
  const queryKey = ['preview', token];
  const view = useQuery({ queryKey, queryFn: () => previewApi('GET', `/${encodeURIComponent(token)}`) });
  const [name, setName] = useState(() => localStorage.getItem(NAME_KEY) ?? '');
  const [comment, setComment] = useState('');
  const [error, setError] = useState<unknown>();
  const [thanks, setThanks] = useState<string>();

  const send = async (what: 'comment' | 'approve' | 'changes') => {
    setError(undefined);
    setThanks(undefined);
    const path = `/${encodeURIComponent(token)}` as const;
    try {
      if (what === 'comment') await previewApi('POST', `${path}/comments`, { name, content: comment });
      else await previewApi('POST', `${path}/decision`, { name, decision: what, ...(comment.trim() ? { comment } : {}) });
      localStorage.setItem(NAME_KEY, name.trim());
      setComment('');
      setThanks(t(what === 'comment' ? 'preview.thanksComment' : what === 'approve' ? 'preview.thanksApprove' : 'preview.thanksChanges'));
      await client.invalidateQueries({ queryKey });
    } catch (err) {
      setError(err);
    }
  };

  const v = view.data;
  return (
    <>
      <header className="top">
        <span className="brand">{t('app.name')}</span>
      </header>
      <main id="main" className="preview-page">
        {view.isPending && <Loading />}
        <ErrorNote error={view.error} onRetry={() => view.refetch()} />
        {v && (
          <>
            <h1>{t('preview.title', { network: v.network.name })}</h1>
            <p className="row">
              {t('preview.for', { channel: v.channel.name, when: formatWhen(v.post.publishDate, prefs) })}
              {v.post.approval ? <ApprovalBadge approval={v.post.approval} /> : <StateBadge state={v.post.state as 'DRAFT'} />}
            </p>
            <Preview
              channel={v.channel}
              network={{ identifier: v.network.identifier, name: v.network.name, rules: v.network.rules as Network['rules'] }}
              settings={v.post.settings}
              planned={Date.parse(v.post.publishDate)}
              items={v.post.items.map((item) => ({
                content: item.content,
                delay: item.delay,
                media: item.media.map((m, i) => ({ ...m, id: String(i), alt: m.alt ?? '' })),
              }))}
            />
            <section aria-labelledby="feedback-title">
              <h2 id="feedback-title">{t('preview.feedback')}</h2>
              {v.feedback.length === 0 && <p>{t('preview.noFeedback')}</p>}
              <ul className="comments">
                {v.feedback.map((f) => (
                  <li key={f.id} className="comment">
                    <div className="row">
                      <strong>{t(FEEDBACK_WORDS[f.kind], { name: f.name })}</strong>
                      <small>{formatWhen(f.at, prefs)}</small>
                    </div>
                    {f.text && <p className="content">{f.text}</p>}
                  </li>
                ))}
              </ul>
            </section>
            {thanks && <Notice kind="success">{thanks}</Notice>}
            <form
              className="panel"
              onSubmit={(e) => {
                e.preventDefault();
                void send('comment');
              }}
            >
              <label>
                {t('preview.yourName')}
                <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" aria-describedby="guest-name-error" />
              </label>
              <FieldError error={error} path="name" id="guest-name-error" />
              <label>
                {t('preview.comment')}
                <textarea value={comment} rows={3} onChange={(e) => setComment(e.target.value)} aria-describedby="guest-comment-help guest-comment-error" />
              </label>
              <p className="hint" id="guest-comment-help">
                {t('preview.changesHelp')}
              </p>
              <div id="guest-comment-error">
                <FieldError error={error} path="content" />
                <FieldError error={error} path="comment" />
              </div>
              <div className="row">
                <button type="submit">{t('preview.send')}</button>
                {v.canDecide && (
                  <>
                    <button type="button" className="primary" onClick={() => send('approve')}>
                      {t('preview.approve')}
                    </button>
                    <button type="button" onClick={() => send('changes')}>
                      {t('preview.changes')}
                    </button>
                  </>
                )}
              </div>
              <ErrorNote error={error} />
            </form>
            <p className="hint">{t('preview.expires', { when: formatWhen(v.expiresAt, prefs) })}</p>
          </>
        )}
      </main>
    </>
  );
}
