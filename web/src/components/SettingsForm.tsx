/**
 * A form for a JSON Schema object: the network's post settings or a channel's
 * credentials, as the server's zod schemas describe them (GET /api/app/networks).
 */
import type { JsonSchema } from '../api.ts';
import { FieldError } from './ui.tsx';

function kindOf(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (schema.enum) return 'enum';
  if (!type && schema.anyOf) return kindOf(schema.anyOf.find((s) => s.type !== 'null') ?? {});
  return type ?? 'string';
}

function label(name: string): string {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());
}

export function SchemaFields({
  schema,
  value,
  onChange,
  idPrefix,
  error,
  errorPath,
  secretFields = false,
}: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  idPrefix: string;
  error?: unknown;
  errorPath: string;
  secretFields?: boolean;
}) {
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length === 0) return null;
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined || v === '') delete next[name];
    else next[name] = v;
    onChange(next);
  };
  return (
    <div className="schema-fields">
      {entries.map(([name, field]) => {
        const id = `${idPrefix}-${name}`;
        const required = schema.required?.includes(name);
        const kind = kindOf(field);
        const help = field.description ? <small id={`${id}-help`}>{field.description}</small> : null;
        const described = `${id}-help ${id}-error`;
        const current = value[name];
        let input;
        if (kind === 'boolean') {
          return (
            <div key={name} className="field">
              <label className="check">
                <input id={id} type="checkbox" checked={current === true} onChange={(e) => set(name, e.target.checked)} aria-describedby={described} />
                {label(name)}
              </label>
              {help}
              <FieldError error={error} path={errorPath ? `${errorPath}.${name}` : name} id={`${id}-error`} label={label(name)} />
            </div>
          );
        } else if (kind === 'enum') {
          input = (
            <select
              id={id}
              value={current === undefined ? '' : String(current)}
              onChange={(e) => set(name, e.target.value || undefined)}
              aria-describedby={described}
            >
              <option value="">—</option>
              {(field.enum ?? []).map((option) => (
                <option key={String(option)}>{String(option)}</option>
              ))}
            </select>
          );
        } else if (kind === 'number' || kind === 'integer') {
          input = (
            <input
              id={id}
              type="number"
              value={current === undefined ? '' : String(current)}
              onChange={(e) => set(name, e.target.value === '' ? undefined : Number(e.target.value))}
              aria-describedby={described}
            />
          );
        } else if (kind === 'array') {
          input = (
            <input
              id={id}
              value={Array.isArray(current) ? current.join(', ') : ''}
              onChange={(e) =>
                set(
                  name,
                  e.target.value
                    ? e.target.value
                        .split(',')
                        .map((s) => s.trim())
                        .filter(Boolean)
                    : undefined,
                )
              }
              aria-describedby={described}
            />
          );
        } else if (kind === 'object') {
          input = (
            <textarea
              id={id}
              defaultValue={current === undefined ? '' : JSON.stringify(current)}
              onBlur={(e) => {
                try {
                  set(name, e.target.value ? JSON.parse(e.target.value) : undefined);
                } catch {
                  set(name, e.target.value);
                }
              }}
              aria-describedby={described}
            />
          );
        } else {
          const secret = secretFields && /token|password|secret|key/i.test(name);
          input = (
            <input
              id={id}
              type={secret ? 'password' : 'text'}
              autoComplete="off"
              value={current === undefined ? '' : String(current)}
              onChange={(e) => set(name, e.target.value)}
              aria-describedby={described}
            />
          );
        }
        return (
          <div key={name} className="field">
            <label htmlFor={id}>
              {label(name)}
              {required && <span aria-hidden="true"> *</span>}
            </label>
            {input}
            {help}
            <FieldError error={error} path={errorPath ? `${errorPath}.${name}` : name} id={`${id}-error`} label={label(name)} />
          </div>
        );
      })}
    </div>
  );
}
