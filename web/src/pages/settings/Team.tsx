/** The team: its people and their roles, whether members' posts need approval, and invitations. */
import { useState } from 'react';
import { api, type AppBody } from '../../api.ts';
import { useSession } from '../../data.ts';
import { t } from '../../i18n.ts';
import { ApprovalSetting } from '../../components/Approval.tsx';
import { SsoSettings } from '../../components/SingleSignOn.tsx';
import { CopyButton, DeleteButton, ErrorNote, ListTable, Loading, Notice, Secret, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

/** The roles a person can be given (the owner's is not one). */
type Role = AppBody<'setRole'>['role'];

export function Team() {
  const session = useSession();
  const people = useSection(['people'], '/people');
  const invitations = useSection(['invitations'], '/invitations');
  const [form, setForm] = useState<{ email: string; role: Role }>({ email: '', role: 'member' });
  const [link, setLink] = useState<{ url: string; email: string; mailed: boolean }>();
  if (people.list.isPending) return <Loading />;
  const me = session.data?.user.id;
  return (
    <div>
      <h2>{t('team.people')}</h2>
      <ErrorNote error={people.list.error ?? people.error ?? invitations.error} />
      <ListTable headers={[t('auth.email'), t('team.role')]}>
        {people.list.data?.map((p) => (
          <tr key={p.id}>
            <td>
              {p.name ? `${p.name} · ` : ''}
              {p.email} {p.id === me && t('team.you')}
            </td>
            <td>
              {p.role === 'owner' || !session.data?.permissions.managePeople ? (
                t(`team.roles.${p.role}`)
              ) : (
                <select
                  aria-label={`${t('team.role')}: ${p.email}`}
                  value={p.role}
                  onChange={(e) => people.act(() => api('PATCH', `/people/${p.id}`, { role: e.target.value as Role }))}
                >
                  <option value="admin">{t('team.roles.admin')}</option>
                  <option value="member">{t('team.roles.member')}</option>
                </select>
              )}
            </td>
            <td>
              {p.role !== 'owner' && p.id !== me && session.data?.permissions.managePeople && (
                <DeleteButton name={p.email} label={t('common.remove')} onConfirm={() => people.act(() => api('DELETE', `/people/${p.id}`))} />
              )}
            </td>
          </tr>
        ))}
      </ListTable>
      <ApprovalSetting />
      {session.data?.permissions.managePeople && <SsoSettings />}
      {session.data?.permissions.invite && (
        <>
          <h2>{t('team.invitations')}</h2>
          <ul>
            {invitations.list.data?.map((i) => (
              <li key={i.id}>
                {i.email} ({t(`team.roles.${i.role}`)}) {i.signupUrl && <CopyButton text={i.signupUrl} label={t('team.copyLink', { email: i.email })} />}{' '}
                <button type="button" onClick={() => invitations.act(() => api('DELETE', `/invitations/${i.id}`))}>
                  {t('team.withdraw')}
                </button>
              </li>
            ))}
          </ul>
          {link && (
            <>
              {/* Mailed, or (mail off) for the inviter to send: the link can be copied either way. */}
              <Notice kind={link.mailed ? 'success' : 'warning'}>{t(link.mailed ? 'team.mailed' : 'team.mailOff', { email: link.email })}</Notice>
              <Secret label={t('team.link')} value={link.url} />
            </>
          )}
          <form
            className="panel"
            onSubmit={async (e) => {
              e.preventDefault();
              const made = await invitations.act(() => api('POST', '/invitations', form));
              if (made) {
                setLink({ url: made.signupUrl, email: made.email, mailed: made.mailed });
                setForm({ email: '', role: 'member' });
              }
            }}
          >
            <TextField
              label={t('auth.email')}
              type="email"
              value={form.email}
              onChange={(email) => setForm({ ...form, email })}
              error={invitations.error}
              path="email"
              id="invite-email"
            />
            <label>
              {t('team.role')}
              <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
                <option value="member">{t('team.roles.member')}</option>
                <option value="admin">{t('team.roles.admin')}</option>
              </select>
            </label>
            <button type="submit" className="primary">
              {t('team.invite')}
            </button>
          </form>
        </>
      )}
    </div>
  );
}
