/**
 * Connecting a channel by approval (Farcaster): Herald asks the network for a
 * request, the person opens its link where they use the network (often their
 * phone) and approves; this asks every few seconds until they have.
 */
import { useEffect, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type AppAnswer, type Network } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import { ErrorNote, Loading, Notice } from './ui.tsx';

/** How often the approval is asked after. */
const ASK_EVERY_MS = 2_000;

export function ApprovalConnect({ network, onDone, onPaste }: { network: Network; onDone: () => void; onPaste: () => void }) {
  const client = useQueryClient();
  const [request, setRequest] = useState<AppAnswer<'startApproval'>>();
  const [error, setError] = useState<unknown>();
  const start = () => {
    setError(undefined);
    setRequest(undefined);
    api('POST', `/connect/${network.identifier}/approval`).then(setRequest, setError);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: one request per opening of the dialog
  useEffect(start, []);
  const approval = useQuery({
    queryKey: ['approval', network.identifier, request?.id],
    enabled: !!request,
    queryFn: () => api('GET', `/connect/${network.identifier}/approval/${encodeURIComponent(request!.id)}`),
    refetchInterval: (query) => (query.state.data?.status === 'approved' || query.state.error ? false : ASK_EVERY_MS),
  });
  const approved = approval.data?.status === 'approved';
  useEffect(() => {
    if (approved) void client.invalidateQueries({ queryKey: keys.channels });
  }, [approved, client]);

  if (approved) {
    return (
      <div>
        <Notice kind="success">{t('channels.approvalDone', { name: approval.data?.channel?.name ?? network.name })}</Notice>
        <button type="button" className="primary" onClick={onDone}>
          {t('common.close')}
        </button>
      </div>
    );
  }
  return (
    <div>
      <h3>{t('channels.credentialsFor', { name: network.name })}</h3>
      <p>{t('channels.approvalIntro', { name: network.name })}</p>
      <ErrorNote error={error ?? approval.error} onRetry={start} />
      {!request && !error && <Loading />}
      {request && (
        <>
          <p>
            <a className="button primary" href={request.approvalUrl} target="_blank" rel="noopener noreferrer">
              {t('channels.approvalOpen', { name: network.name })}
            </a>
          </p>
          <p className="hint approval-link">{request.approvalUrl}</p>
          <p role="status">{t('channels.approvalWaiting')}</p>
        </>
      )}
      <div className="row">
        <button type="button" onClick={onPaste}>
          {t('channels.approvalPaste')}
        </button>
      </div>
    </div>
  );
}
