import type { Channel, Network } from '../api.ts';
import { t } from '../i18n.ts';
import { Preview } from '../components/Preview.tsx';
import { fromLocalInput } from '../wall-clock.ts';
import { type Draft, itemsOf } from './draft.ts';

/** When the draft goes out, for the previews that place it among the channel's other posts. */
function plannedAt(draft: Draft, slot: string | undefined): number {
  if (draft.when === 'slot' && slot) return Date.parse(slot);
  if (draft.when === 'at') return fromLocalInput(draft.local, draft.zone) ?? Date.now();
  return Date.now();
}

/**
 * The post as each chosen channel's network will show it, beside the editor on
 * a wide screen and under it on a narrow one (the layout is the stylesheet's).
 */
export function PreviewPanel({
  draft,
  selected,
  networkOf,
  slot,
  editing,
}: {
  draft: Draft;
  selected: Channel[];
  networkOf: Map<string, Network>;
  slot?: string;
  editing?: string;
}) {
  const planned = plannedAt(draft, slot);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: on a wide screen the column scrolls on its own; the keyboard must reach it (axe: scrollable-region-focusable).
    <aside className="composer-preview" aria-labelledby="previews-title" tabIndex={0}>
      <h2 id="previews-title">{t('previews.heading')}</h2>
      {selected.length === 0 && <p className="hint">{t('previews.none')}</p>}
      {selected.map((c) => {
        const network = networkOf.get(c.identifier);
        if (!network) return null;
        return (
          <section key={c.id} className="preview-box" aria-label={t('composer.previewFor', { name: `${network.name} (${c.name})` })}>
            <h3>{t('composer.previewFor', { name: `${network.name} (${c.name})` })}</h3>
            <Preview
              channel={c}
              network={network}
              items={itemsOf(draft, c.id)}
              settings={draft.settings[c.id] ?? {}}
              planned={planned}
              postId={editing}
              signedIn
            />
          </section>
        );
      })}
    </aside>
  );
}
