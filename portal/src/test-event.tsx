// "Send test event": `webhooks.test` by default, or the example of a catalog type the user
// picks (POST /configs/{id}/test with {eventType}); only types with an example are offered,
// since the API sends the catalog's example and nothing else. The result shows the answer's
// status and error.
import { useState } from "preact/hooks";
import { type ApiError, type Attempt, asApiError, must } from "./api";
import { usePortal } from "./context";
import { useLoad } from "./load";
import { ErrorText } from "./messages";

const DEFAULT_TYPE = "webhooks.test";

export function TestEvent({ id }: { id: string }) {
  const { client, can } = usePortal();
  const [eventType, setEventType] = useState(DEFAULT_TYPE);
  const [result, setResult] = useState<Attempt | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  // The catalog is read under "endpoints"; without it, the default test event only.
  const catalog = useLoad(
    async () => (can("endpoints") ? (await must(client.GET("/event-types"))).cursor.data : []),
    [],
  );
  const withExample = (catalog.data ?? []).filter((t) => t.example !== undefined);
  const send = async () => {
    setBusy(true);
    setError(undefined);
    setResult(null);
    try {
      const body = eventType === DEFAULT_TYPE ? undefined : { eventType };
      setResult((await must(client.POST("/configs/{id}/test", { params: { path: { id } }, body }))).data);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="test-event">
      <div class="inline-form">
        <label for="test-event-type">Test event</label>
        <select id="test-event-type" value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
          <option value={DEFAULT_TYPE}>{DEFAULT_TYPE} (a fixed test payload)</option>
          {withExample.map((t) => (
            <option key={t.name} value={t.name}>
              {t.name} (the catalog's example)
            </option>
          ))}
        </select>
        <button type="button" onClick={send} disabled={busy}>
          Send test event
        </button>
      </div>
      {result ? (
        <p class="test-result" role="status">
          Test event: <strong class={result.status === "success" ? "ok" : "warn"}>{result.status}</strong>,
          HTTP {result.statusCode || "no answer"}
          {result.error ? ` — ${result.error}` : ""}
        </p>
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}
