// Event types picked from the catalog (GET /event-types), each with its description; the
// example payload of every picked type is shown under it. Types the catalog does not list
// (or wildcards such as ledger.*) go in a free text field.
import type { EventType } from "./api";
import { exampleOf } from "./schema-example";

interface Props {
  catalog: EventType[];
  picked: string[];
  others: string;
  onPick: (picked: string[]) => void;
  onOthers: (text: string) => void;
  error?: string | undefined;
}

export function EventTypePicker({ catalog, picked, others, onPick, onOthers, error }: Props) {
  const toggle = (name: string, on: boolean) =>
    onPick(on ? [...picked, name] : picked.filter((p) => p !== name));
  return (
    <fieldset class="event-types" aria-describedby={error ? "eventTypes-error" : undefined}>
      <legend>Event types</legend>
      {catalog.length === 0 ? <p class="muted small">The catalog lists no event types.</p> : null}
      <ul class="catalog">
        {catalog.map((type) => {
          const id = `type-${type.name}`;
          const on = picked.includes(type.name);
          return (
            <li key={type.name}>
              <input
                type="checkbox"
                id={id}
                checked={on}
                onChange={(e) => toggle(type.name, e.currentTarget.checked)}
              />
              <label for={id}>
                <code>{type.name}</code>
                {type.deprecated ? <span class="badge off">deprecated</span> : null}
                {type.description ? <span class="muted"> — {type.description}</span> : null}
              </label>
              {on ? (
                <figure class="example">
                  <figcaption>Example payload of {type.name}</figcaption>
                  <pre data-example={type.name}>{JSON.stringify(exampleOf(type), null, 2)}</pre>
                </figure>
              ) : null}
            </li>
          );
        })}
      </ul>
      <label for="other-types">Other event types (comma-separated, wildcards such as ledger.* allowed)</label>
      <input id="other-types" type="text" value={others} onInput={(e) => onOthers(e.currentTarget.value)} />
      {error ? (
        <p class="field-error" id="eventTypes-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
