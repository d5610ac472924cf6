import type { Template } from '../api.ts';
import { useTemplates } from '../data.ts';
import { t } from '../i18n.ts';

/** The account's templates (a post starts from one) and signatures (added at the end of the post). */
export function TextPicker({ onTemplate, onSignature }: { onTemplate: (text: string) => void; onSignature: (text: string) => void }) {
  const templates = useTemplates();
  const of = (kind: Template['kind']) => (templates.data ?? []).filter((x) => x.kind === kind);
  if (!templates.data?.length) return null;
  const picker = (kind: Template['kind'], label: string, use: (text: string) => void) =>
    of(kind).length > 0 && (
      <label className="inline">
        {label}
        <select
          value=""
          onChange={(e) => {
            const chosen = of(kind).find((x) => x.id === e.target.value);
            if (chosen) use(chosen.content);
          }}
        >
          <option value="">{t('composer.choose')}</option>
          {of(kind).map((x) => (
            <option key={x.id} value={x.id}>
              {x.name}
            </option>
          ))}
        </select>
      </label>
    );
  return (
    <div className="row">
      {picker('template', t('composer.useTemplate'), onTemplate)}
      {picker('signature', t('composer.addSignature'), onSignature)}
    </div>
  );
}
