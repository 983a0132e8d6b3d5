// Bulk recovery: replay every delivery of the endpoint that ended failed in a time window,
// then follow the recovery's progress until it is done.
import { useEffect, useState } from "preact/hooks";
import { type ApiError, asApiError, type Config, must, type Recovery } from "./api";
import { usePortal } from "./context";
import { actionKey } from "./format";
import { useLoad } from "./load";
import { ErrorText } from "./messages";
import { When } from "./time";

const toInput = (d: Date) =>
  new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function RecoveryPanel({ config }: { config: Config }) {
  const { client } = usePortal();
  const now = new Date();
  const [since, setSince] = useState(toInput(new Date(now.getTime() - 24 * 3600_000)));
  const [until, setUntil] = useState("");
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const path = { params: { path: { id: config.id } } };
  // Polled every second while a recovery runs, to show its progress.
  const [running, setRunning] = useState(false);
  const list = useLoad(
    async () => (await must(client.GET("/configs/{id}/recoveries", path))).data ?? [],
    [config.id],
    running ? 1000 : undefined,
  );
  const anyRunning = (list.data ?? []).some((r) => r.state === "running");
  useEffect(() => setRunning(anyRunning), [anyRunning]);

  const start = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await must(
        client.POST("/configs/{id}/recover", {
          params: { path: { id: config.id }, header: { "Idempotency-Key": actionKey("recover") } },
          body: {
            since: new Date(since).toISOString(),
            ...(until ? { until: new Date(until).toISOString() } : {}),
          },
        }),
      );
      list.reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <section aria-labelledby="recovery-title">
      <h2 id="recovery-title">Recover failed deliveries</h2>
      <form class="inline-form" onSubmit={start}>
        <label for="recover-since">Failed since</label>
        <input
          id="recover-since"
          type="datetime-local"
          value={since}
          onInput={(e) => setSince(e.currentTarget.value)}
        />
        <label for="recover-until">Until (empty: now)</label>
        <input
          id="recover-until"
          type="datetime-local"
          value={until}
          onInput={(e) => setUntil(e.currentTarget.value)}
        />
        <button type="submit" disabled={!config.active}>
          Start recovery
        </button>
      </form>
      {!config.active ? <p class="muted small">Enable the endpoint to recover its deliveries.</p> : null}
      <ErrorText error={error} />
      {(list.data ?? []).length > 0 ? <Recoveries recoveries={list.data ?? []} /> : null}
    </section>
  );
}

function Recoveries({ recoveries }: { recoveries: Recovery[] }) {
  return (
    <table class="list stack recoveries">
      <thead>
        <tr>
          <th scope="col">Window</th>
          <th scope="col">State</th>
          <th scope="col">Failed found</th>
          <th scope="col">Replays started</th>
          <th scope="col">Could not start</th>
        </tr>
      </thead>
      <tbody>
        {recoveries.map((r) => (
          <tr key={r.id}>
            <td class="lead">
              <When iso={r.since} /> – <When iso={r.until} />
            </td>
            <td class="recovery-state" data-label="State">
              <progress
                aria-label="Recovery progress"
                max={Math.max(r.matched, 1)}
                value={r.state === "running" ? r.started + (r.alreadyStarted ?? 0) : Math.max(r.matched, 1)}
              />{" "}
              {r.state}
            </td>
            <td data-label="Failed found">{r.matched}</td>
            <td data-label="Replays started">{r.started}</td>
            <td data-label="Could not start">
              {r.failedToStart ?? 0}
              {r.lastError ? <div class="small warn">{r.lastError}</div> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
