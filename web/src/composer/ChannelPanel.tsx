import type { Channel, Network } from '../api.ts';
import { checkItems, type Fix, type ItemDraft } from '../composer-rules.ts';
import { t } from '../i18n.ts';
import { Avatar, FieldError, Notice, problemsAt } from '../components/ui.tsx';
import { SchemaFields } from '../components/SettingsForm.tsx';
import { ThreadEditor, type UpdateItem } from './ThreadEditor.tsx';

/** Each fix's button, in the network's terms. */
const FIX_LABEL: Record<Fix, (network: Network) => string> = {
  split: () => t('composer.split'),
  shorten: (network) => t('composer.shorten', { max: network.rules.maxLength }),
  drop: (network) => t('composer.drop', { name: network.name }),
};

/**
 * One selected channel: its counts and problems against its network's rules
 * (with their fixes), its own text when adjusted and its settings (its preview
 * is beside the editor: PreviewPanel).
 */
export function ChannelPanel({
  channel: c,
  network,
  items,
  adjusted,
  settings,
  at,
  error,
  updateItem,
  onFix,
  onAdjust,
  onUseShared,
  onSettings,
}: {
  channel: Channel;
  network: Network;
  /** The items it publishes: its own when adjusted, else the shared ones. */
  items: ItemDraft[];
  adjusted: boolean;
  settings: Record<string, unknown>;
  /** Where the API's problems with this channel's entry are (posts.{index}). */
  at: string;
  error: unknown;
  updateItem: UpdateItem;
  onFix: (item: number, fix: Fix) => void;
  onAdjust: () => void;
  onUseShared: () => void;
  onSettings: (value: Record<string, unknown>) => void;
}) {
  const check = checkItems(network, items);
  return (
    <section className="per-channel" aria-label={network.name + ': ' + c.name}>
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
            <button key={fix} type="button" onClick={() => onFix(p.item, fix)}>
              {FIX_LABEL[fix](network)}
            </button>
          ))}
        </div>
      ))}
      {adjusted ? (
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
          <button type="button" onClick={onUseShared}>
            {t('composer.useShared')}
          </button>
        </>
      ) : (
        <button type="button" onClick={onAdjust}>
          {t('composer.adjustFor', { name: c.name })}
        </button>
      )}
      {network.settings.properties && Object.keys(network.settings.properties).length > 0 && (
        <details open={problemsAt(error, `${at}.settings`).length > 0}>
          <summary>{t('composer.settings', { name: network.name })}</summary>
          <SchemaFields
            schema={network.settings}
            value={settings}
            onChange={onSettings}
            idPrefix={`settings-${c.id}`}
            error={error}
            errorPath={`${at}.settings`}
          />
        </details>
      )}
      <FieldError error={error} path={`${at}.integration`} />
    </section>
  );
}
