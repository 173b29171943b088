// The role editor's controls: a labelled field with its error or hint, and the text
// inputs and areas bound to a field of the form.
import type { ReactNode } from 'react';
import { TextWithCode } from '../../components/text-with-code';
import type { Errors, Form, TextField } from './role-form';

export type SetField = <K extends keyof Form>(key: K, value: Form[K]) => void;

/** The form as it stands, its errors, and controls bound to them. */
export interface Controls {
  form: Form;
  errors: Errors;
  set: SetField;
  field: (key: keyof Form, label: string, input: ReactNode, hint?: ReactNode) => ReactNode;
  text: (key: TextField, props?: { placeholder?: string; type?: string; autoFocus?: boolean }) => ReactNode;
  area: (key: TextField, rows: number, placeholder?: string) => ReactNode;
}

export function controlsOf(form: Form, errors: Errors, set: SetField): Controls {
  const field: Controls['field'] = (key, label, input, hint) => (
    <Field key={key} label={label} error={errors[key]} hint={hint}>
      {input}
    </Field>
  );
  const text: Controls['text'] = (key, props = {}) => (
    <input
      value={form[key]}
      onChange={(event) => set(key, event.target.value as never)}
      aria-invalid={errors[key] ? true : undefined}
      spellCheck={false}
      {...props}
    />
  );
  const area: Controls['area'] = (key, rows, placeholder) => (
    <textarea
      value={form[key]}
      rows={rows}
      placeholder={placeholder}
      onChange={(event) => set(key, event.target.value as never)}
      aria-invalid={errors[key] ? true : undefined}
      spellCheck={false}
    />
  );
  return { form, errors, set, field, text, area };
}

export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <label className={`field${error ? ' has-error' : ''}`}>
      <span className="field-label">{label}</span>
      {children}
      {error ? (
        <span className="field-error">
          <TextWithCode text={error} />
        </span>
      ) : hint ? (
        <span className="field-hint">{typeof hint === 'string' ? <TextWithCode text={hint} /> : hint}</span>
      ) : null}
    </label>
  );
}
