/**
 * A date and time as a datetime-local input holds it (YYYY-MM-DDTHH:MM, on the
 * wall clock of a time zone) and the instant it names. Pure (no React, no DOM,
 * no i18n), so the composer's request builder and its unit tests use it too.
 */

/** The wall-clock fields of an instant in `zone`, as a datetime-local input shows them (YYYY-MM-DDTHH:MM). */
export function toLocalInput(instant: number, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(instant))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** The instant at which the wall clock in `zone` reads `local` (YYYY-MM-DDTHH:MM); undefined when it is not a date. */
export function fromLocalInput(local: string, zone: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local);
  if (!m) return undefined;
  const asUtc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!);
  // The zone's offset at that moment, found by reading the guess back (twice, across an offset change).
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const shown = toLocalInput(guess, zone);
    const shownUtc = Date.UTC(+shown.slice(0, 4), +shown.slice(5, 7) - 1, +shown.slice(8, 10), +shown.slice(11, 13), +shown.slice(14, 16));
    guess += asUtc - shownUtc;
  }
  return guess;
}
