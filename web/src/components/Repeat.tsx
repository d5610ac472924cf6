/**
 * Repeating posts in the composer and on the pages that show them: the
 * "Repeat" fields (every N days or weeks, or chosen weekdays; until a date or a
 * number of times) and the rule in words. The fields' values and the rule they
 * make for /series are web/src/composer/repeat-draft.ts.
 */
import { ApiError, type RepeatRule } from '../api.ts';
import { locale, t } from '../i18n.ts';
import type { Prefs } from '../prefs.ts';
import { toLocalInput } from '../wall-clock.ts';
import { WEEKDAYS, type RepeatDraft, type Weekday } from '../composer/repeat-draft.ts';
import { FieldError } from './ui.tsx';

const weekdayName = (d: Weekday, style: 'short' | 'long') =>
  // 2024-01-01 was a Monday.
  new Intl.DateTimeFormat(locale, { weekday: style, timeZone: 'UTC' }).format(Date.UTC(2024, 0, 1 + WEEKDAYS.indexOf(d)));

/** "Every 2 weeks on Mon, Thu at 09:00 (Europe/Berlin), 10 times in all". */
export function describeRule(rule: RepeatRule, prefs: Prefs): string {
  const start = Date.parse(rule.start);
  const unit =
    rule.unit === 'day'
      ? rule.every === 1
        ? t('series.everyDay')
        : t('series.everyDays', { n: rule.every })
      : rule.every === 1
        ? t('series.everyWeek')
        : t('series.everyWeeks', { n: rule.every });
  const days = rule.unit === 'week' ? (rule.weekdays ?? [WEEKDAYS[(new Date(toLocalInput(start, rule.timezone).slice(0, 10)).getUTCDay() + 6) % 7]!]) : [];
  const time = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', timeZone: rule.timezone, hour12: prefs.hour12 }).format(start);
  const end = rule.count
    ? t('series.countTimes', { count: rule.count })
    : rule.until
      ? t('series.untilDay', { date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: rule.timezone }).format(Date.parse(rule.until)) })
      : '';
  return [
    unit,
    days.length > 0 ? t('series.onWeekdays', { days: days.map((d) => weekdayName(d, 'short')).join(', ') }) : '',
    t('series.atTime', { time, zone: rule.timezone }),
  ]
    .filter(Boolean)
    .join(' ')
    .concat(end ? `, ${end}` : '');
}

/** The API's problems with the rule as a whole (its start, zone, whether anything is left of it); each field shows its own. */
function RuleError({ error }: { error: unknown }) {
  const whole = ['repeat', 'repeat.start', 'repeat.timezone', 'repeat.unit'];
  const found = error instanceof ApiError ? error.fields.filter((f) => whole.includes(f.path)) : [];
  if (found.length === 0) return null;
  return (
    <p className="field-error" role="alert">
      {found.map((f) => f.message).join('; ')}
    </p>
  );
}

/** The composer's "Repeat" fields; the date, time and zone above them are the rule's start. */
export function RepeatFields({
  draft,
  onChange,
  zone,
  startDay,
  error,
  locked,
}: {
  draft: RepeatDraft;
  onChange: (change: Partial<RepeatDraft>) => void;
  zone: string;
  /** The weekday of the start, ticked when weeks are chosen and no day is. */
  startDay: Weekday;
  error: unknown;
  /** Editing a series: it stays a series. */
  locked?: boolean;
}) {
  return (
    <fieldset className="repeat" aria-describedby="repeat-error">
      <legend>{t('series.repeat')}</legend>
      {!locked && (
        <label className="check">
          <input
            type="checkbox"
            checked={draft.on}
            onChange={(e) => onChange({ on: e.target.checked, weekdays: draft.weekdays.length > 0 ? draft.weekdays : [startDay] })}
          />
          {t('series.repeatThis')}
        </label>
      )}
      <div id="repeat-error">
        <RuleError error={error} />
      </div>
      {draft.on && (
        <>
          <div className="row">
            <label className="inline">
              {t('series.every')}
              <input
                type="number"
                min={1}
                max={365}
                value={draft.every}
                onChange={(e) => onChange({ every: Math.max(1, Number(e.target.value) || 1) })}
                className="narrow"
                aria-describedby="repeat-every-error"
              />
            </label>
            <label className="inline">
              <span className="visually-hidden">{t('series.unit')}</span>
              <select
                value={draft.unit}
                onChange={(e) => onChange({ unit: e.target.value as RepeatDraft['unit'], weekdays: draft.weekdays.length > 0 ? draft.weekdays : [startDay] })}
              >
                <option value="day">{t('series.days')}</option>
                <option value="week">{t('series.weeks')}</option>
              </select>
            </label>
          </div>
          <FieldError error={error} path="repeat.every" id="repeat-every-error" />
          {draft.unit === 'week' && (
            <fieldset className="weekdays">
              <legend>{t('series.onDays')}</legend>
              {WEEKDAYS.map((d) => (
                <label key={d} className="check">
                  <input
                    type="checkbox"
                    checked={draft.weekdays.includes(d)}
                    onChange={(e) =>
                      onChange({
                        weekdays: e.target.checked ? WEEKDAYS.filter((w) => w === d || draft.weekdays.includes(w)) : draft.weekdays.filter((w) => w !== d),
                      })
                    }
                  />
                  <span aria-hidden="true">{weekdayName(d, 'short')}</span>
                  <span className="visually-hidden">{weekdayName(d, 'long')}</span>
                </label>
              ))}
              <FieldError error={error} path="repeat.weekdays" />
            </fieldset>
          )}
          <fieldset className="ends">
            <legend>{t('series.ends')}</legend>
            {(['never', 'until', 'count'] as const).map((end) => (
              <label key={end} className="check">
                <input type="radio" name="repeat-end" value={end} checked={draft.end === end} onChange={() => onChange({ end })} />
                {t(end === 'never' ? 'series.never' : end === 'until' ? 'series.onDate' : 'series.afterCount')}
              </label>
            ))}
            {draft.end === 'until' && (
              <label>
                {t('series.lastDate')}
                <input type="date" value={draft.until} onChange={(e) => onChange({ until: e.target.value })} aria-describedby="repeat-until-error" />
              </label>
            )}
            {draft.end === 'until' && <FieldError error={error} path="repeat.until" id="repeat-until-error" />}
            {draft.end === 'count' && (
              <label>
                {t('series.times')}
                <input
                  type="number"
                  min={1}
                  max={1000}
                  value={draft.count}
                  onChange={(e) => onChange({ count: Math.max(1, Number(e.target.value) || 1) })}
                  className="narrow"
                  aria-describedby="repeat-count-error"
                />
              </label>
            )}
            {draft.end === 'count' && <FieldError error={error} path="repeat.count" id="repeat-count-error" />}
          </fieldset>
          <label>
            {t('series.name')}
            <input value={draft.name} onChange={(e) => onChange({ name: e.target.value })} maxLength={200} />
          </label>
          <p className="hint">{t('series.startsAt', { zone })}</p>
        </>
      )}
    </fieldset>
  );
}
