/**
 * CSV import and export. A chosen file is checked at once (nothing is stored):
 * its problems show by line and column, and the import button works only for a
 * clean file. The export downloads the posts of a range of days.
 */
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { importReport } from '../../../src/contract/index.ts';
import { ApiError, postFile, pub } from '../api.ts';
import { keys } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { fromLocalInput, toLocalInput } from '../wall-clock.ts';
import { ErrorNote, Notice } from '../components/ui.tsx';

type Report = z.output<typeof importReport>;
type Problem = Report['problems'][number];

const DAY = 86_400_000;

export function ImportPage() {
  return (
    <section>
      <h1>{t('import.title')}</h1>
      <ImportForm />
      <ExportForm />
    </section>
  );
}

function ImportForm() {
  const client = useQueryClient();
  const [file, setFile] = useState<File>();
  const [busy, setBusy] = useState<'checking' | 'importing'>();
  const [check, setCheck] = useState<Report>();
  const [result, setResult] = useState<Report>();
  const [problems, setProblems] = useState<Problem[]>([]);
  const [error, setError] = useState<unknown>();

  const send = async (chosen: File, dryRun: boolean) => {
    setError(undefined);
    setBusy(dryRun ? 'checking' : 'importing');
    try {
      const report = await postFile(pub(`/posts/import?dryRun=${dryRun}`), chosen);
      setProblems(report.problems);
      if (dryRun) setCheck(report);
      else {
        setResult(report);
        await client.invalidateQueries({ queryKey: keys.posts });
      }
    } catch (err) {
      // A refused import names its problems as the check does (the file may have changed since).
      if (err instanceof ApiError && err.code === 'invalid_csv') setProblems(err.fields.map(asProblem));
      setError(err);
    } finally {
      setBusy(undefined);
    }
  };

  // The check found nothing wrong, and no import refused the file since.
  const clean = check?.valid && problems.length === 0 ? check : undefined;
  const ready = clean !== undefined && !result && clean.posts > 0;
  return (
    <div className="panel wide">
      <h2>{t('import.head')}</h2>
      <p>{t('import.intro')}</p>
      <Columns />
      <label>
        {t('import.file')}
        <input
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => {
            const chosen = e.target.files?.[0];
            setFile(chosen);
            setCheck(undefined);
            setResult(undefined);
            setProblems([]);
            if (chosen) void send(chosen, true);
          }}
        />
      </label>
      {busy && (
        <p className="loading" role="status">
          {t(busy === 'checking' ? 'import.checking' : 'import.importing')}
        </p>
      )}
      <ErrorNote error={error} />
      {check && (
        <p role="status" data-testid="import-summary">
          {t('import.summary', { rows: check.rows, posts: check.posts, already: check.alreadyImported, published: check.skippedPublished })}
        </p>
      )}
      {problems.length > 0 && <ProblemTable problems={problems} />}
      {clean && !result && clean.posts === 0 && <Notice>{t('import.nothingNew')}</Notice>}
      {ready && <Notice kind="success">{t('import.clean')}</Notice>}
      {result && (
        <Notice kind="success">
          <p>{t('import.done', { count: result.created.length, already: result.alreadyImported })}</p>
          <Link to="/">{t('import.openCalendar')}</Link>
        </Notice>
      )}
      <div className="actions">
        <button type="button" className="primary" disabled={!ready || busy !== undefined} onClick={() => file && void send(file, false)}>
          {t('import.submit', { count: check?.posts ?? 0 })}
        </button>
        {check && !check.valid && <span className="hint">{t('import.blocked')}</span>}
      </div>
    </div>
  );
}

/** What each column of the file takes, on the page (no need to look it up elsewhere). */
const COLUMNS: [column: string, help: MessageKey][] = [
  ['date', 'import.colDate'],
  ['timezone', 'import.colTimezone'],
  ['type', 'import.colType'],
  ['channels', 'import.colChannels'],
  ['group', 'import.colGroup'],
  ['content', 'import.colContent'],
  ['media', 'import.colMedia'],
  ['delay', 'import.colDelay'],
  ['settings', 'import.colSettings'],
];

function Columns() {
  return (
    <div className="columns">
      <p>{t('import.columnsIntro')}</p>
      <dl>
        {COLUMNS.map(([column, help]) => (
          <div key={column}>
            <dt>
              <code>{column}</code>
            </dt>
            <dd>{t(help)}</dd>
          </div>
        ))}
      </dl>
      <p className="hint">{t('import.colExported')}</p>
    </div>
  );
}

/** "line.7.date" (a refused import's errors[].path) as the check reports it. */
function asProblem(field: { path: string; message: string }): Problem {
  const [, line = '0', column = ''] = /^line\.(\d+)(?:\.(.+))?$/.exec(field.path) ?? [];
  return { line: Number(line), column, message: field.message };
}

function ProblemTable({ problems }: { problems: Problem[] }) {
  return (
    <table className="report" data-testid="import-problems">
      <caption>{t('import.problems', { count: problems.length })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('import.line')}</th>
          <th scope="col">{t('import.column')}</th>
          <th scope="col">{t('import.problem')}</th>
        </tr>
      </thead>
      <tbody>
        {problems.map((p, i) => (
          <tr key={`${p.line}-${p.column}-${i}`}>
            <td>{p.line}</td>
            <td>{p.column ? <code>{p.column}</code> : t('import.wholeLine')}</td>
            <td>{p.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Whole days in the person's zone: from the start of the first to the end of the last. */
function ExportForm() {
  const prefs = usePrefs();
  const today = toLocalInput(Date.now(), prefs.zone).slice(0, 10);
  const [from, setFrom] = useState(today);
  const [to, setTo] = useState(toLocalInput(Date.now() + 30 * DAY, prefs.zone).slice(0, 10));
  const start = fromLocalInput(`${from}T00:00`, prefs.zone);
  const dayAfter = /^\d{4}-\d{2}-\d{2}$/.test(to) ? new Date(Date.parse(`${to}T00:00:00Z`) + DAY).toISOString().slice(0, 10) : '';
  const end = dayAfter ? fromLocalInput(`${dayAfter}T00:00`, prefs.zone) : undefined;
  const valid = start !== undefined && end !== undefined && end > start;
  // The dates in the file are written in the zone the days are chosen in.
  const href = valid
    ? `/api/app${pub(`/posts/export?startDate=${new Date(start).toISOString()}&endDate=${new Date(end - 1).toISOString()}&timezone=${encodeURIComponent(prefs.zone)}`)}`
    : undefined;
  return (
    <div className="panel wide">
      <h2>{t('export.head')}</h2>
      <p>{t('export.intro')}</p>
      <div className="row">
        <label>
          {t('export.from')}
          <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} aria-describedby="export-range-error" />
        </label>
        <label>
          {t('export.to')}
          <input type="date" value={to} onChange={(e) => setTo(e.target.value)} aria-describedby="export-range-error" />
        </label>
      </div>
      <p className="hint">{t('export.zone', { zone: prefs.zone })}</p>
      {!valid && (
        <p className="field-error" id="export-range-error" role="alert">
          {t('export.badRange')}
        </p>
      )}
      <div className="actions">
        {href ? (
          <a className="button primary" href={href} download>
            {t('export.download')}
          </a>
        ) : (
          <button type="button" className="primary" disabled>
            {t('export.download')}
          </button>
        )}
      </div>
    </div>
  );
}
