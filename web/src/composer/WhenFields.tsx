import { t, type MessageKey } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { FieldError, ZoneSelect } from '../components/ui.tsx';
import { RepeatFields } from '../components/Repeat.tsx';
import type { Draft, When } from './draft.ts';
import { repeatOf } from './draft.ts';
import { weekdayOf, type RepeatDraft } from './repeat-draft.ts';

const WHEN_LABEL: Record<When, MessageKey> = {
  at: 'composer.at',
  slot: 'composer.nextSlot',
  now: 'composer.now',
  draft: 'composer.draft',
};

/** A post being edited is not published now or in a slot; a series being edited stays at a date and time. */
function unavailable(when: When, editing: boolean, editingSeries: boolean): boolean {
  if (editingSeries) return when !== 'at';
  return editing && (when === 'now' || when === 'slot');
}

/** When to publish: at a date and time (perhaps repeating), in the next free slot, now, or kept as a draft; and short links. */
export function WhenFields({
  draft,
  editing,
  editingSeries,
  slot,
  error,
  update,
  changeZone,
  changeRepeat,
}: {
  draft: Draft;
  editing: boolean;
  editingSeries: boolean;
  /** The first channel's next free slot, once known. */
  slot?: string;
  error: unknown;
  update: (change: Partial<Draft>) => void;
  changeZone: (zone: string) => void;
  changeRepeat: (change: Partial<RepeatDraft>) => void;
}) {
  const prefs = usePrefs();
  return (
    <fieldset className="when">
      <legend>{t('composer.when')}</legend>
      {(Object.keys(WHEN_LABEL) as When[]).map((w) => (
        <label key={w} className="check">
          <input
            type="radio"
            name="when"
            value={w}
            checked={draft.when === w}
            onChange={() => update({ when: w })}
            disabled={unavailable(w, editing, editingSeries)}
          />
          {t(WHEN_LABEL[w])}
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
          draft={repeatOf(draft)}
          onChange={changeRepeat}
          zone={draft.zone}
          startDay={weekdayOf(draft.local)}
          error={error}
          locked={editingSeries}
        />
      )}
      <label className="check">
        <input type="checkbox" checked={draft.shortLink} onChange={(e) => update({ shortLink: e.target.checked })} />
        {t('composer.shortLinks')}
      </label>
    </fieldset>
  );
}
