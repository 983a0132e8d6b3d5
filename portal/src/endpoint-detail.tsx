// One endpoint: its settings and health, the actions on it (edit, disable/enable, delete,
// test event), its deliveries, bulk recovery and signing secret.
import { useState } from "preact/hooks";
import { type ApiError, asApiError, type Config, type EndpointStats, must } from "./api";
import { AuthFacts } from "./auth-facts";
import { usePortal } from "./context";
import { Deliveries } from "./deliveries";
import { StatusBadge } from "./endpoints-list";
import { ms, percent } from "./format";
import { useLoad } from "./load";
import { ErrorText, LoadFailure } from "./messages";
import { RecoveryPanel } from "./recovery-panel";
import { go, href } from "./router";
import { SecretPanel } from "./secret-panel";
import { TestEvent } from "./test-event";
import { When } from "./time";

export function EndpointDetail({ id }: { id: string }) {
  const { client, can } = usePortal();
  const config = useLoad(
    async () => (await must(client.GET("/configs/{id}", { params: { path: { id } } }))).data,
    [id],
  );
  const stats = useLoad(
    async () => (await must(client.GET("/configs/{id}/stats", { params: { path: { id } } }))).data,
    [id],
    5000,
  );
  if (config.error) return <LoadFailure error={config.error} what="This endpoint" />;
  if (!config.data) return <p>Loading…</p>;
  const c = config.data;
  return (
    <>
      <p>
        <a href={href.endpoints()}>← Endpoints</a>
      </p>
      <section aria-labelledby="endpoint-title">
        <div class="title-row">
          <h1 id="endpoint-title">{c.name || c.endpoint}</h1>
          <StatusBadge active={c.active} />
        </div>
        <dl class="facts">
          <dt>URL</dt>
          <dd>
            <code>{c.endpoint}</code>
          </dd>
          <dt>Event types</dt>
          <dd>{c.eventTypes.join(", ")}</dd>
          <dt>Payload filter</dt>
          <dd>{c.filter ? <code>{JSON.stringify(c.filter)}</code> : "none"}</dd>
          {c.auth?.headers?.length ? (
            <>
              <dt>Custom headers</dt>
              <dd>{c.auth.headers.map((h) => `${h.name}: ${h.value}`).join(", ")}</dd>
            </>
          ) : null}
          <AuthFacts auth={c.auth} />
          {c.maxConcurrency !== undefined ? (
            <>
              <dt>Sends at once</dt>
              <dd>at most {c.maxConcurrency}</dd>
            </>
          ) : null}
          {c.deactivatedReason ? (
            <>
              <dt>Disabled automatically</dt>
              <dd class="warn">
                {c.deactivatedReason} (<When iso={c.deactivatedAt} />)
              </dd>
            </>
          ) : null}
        </dl>
        {can("endpoints") ? <EndpointActions config={c} onChange={config.reload} /> : null}
        {can("test-events") ? <TestEvent id={id} /> : null}
      </section>
      <Health stats={stats.data} />
      {can("deliveries") ? <Deliveries configId={id} subscribed={c.eventTypes} /> : null}
      {can("recovery") ? <RecoveryPanel config={c} /> : null}
      {can("secrets") ? <SecretPanel configId={id} /> : null}
    </>
  );
}

function Health({ stats }: { stats: EndpointStats | undefined }) {
  if (!stats) return null;
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {stats.failingSince ? (
        <p class="warn">
          Failing since <When iso={stats.failingSince} />
        </p>
      ) : null}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Window</th>
            <th scope="col">Sends</th>
            <th scope="col">Success rate</th>
            <th scope="col">p50</th>
            <th scope="col">p99</th>
          </tr>
        </thead>
        <tbody>
          {stats.windows.map((w) => (
            <tr key={w.window}>
              <th scope="row">{w.window}</th>
              <td>{w.attempts}</td>
              <td>{percent(w.successRate)}</td>
              <td>{ms(w.latencyMs?.p50)}</td>
              <td>{ms(w.latencyMs?.p99)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EndpointActions({ config, onChange }: { config: Config; onChange: () => void }) {
  const { client } = usePortal();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const run = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const path = { params: { path: { id: config.id } } };
  return (
    <div class="actions">
      {/* Without "secrets" the API keeps the secret on PUT, so editing needs "endpoints" only. */}
      <a class="button" href={href.editEndpoint(config.id)}>
        Edit
      </a>
      {config.active ? (
        <button
          type="button"
          onClick={() => run(() => must(client.PUT("/configs/{id}/deactivate", path)).then(onChange))}
        >
          Disable
        </button>
      ) : (
        <button
          type="button"
          onClick={() => run(() => must(client.PUT("/configs/{id}/activate", path)).then(onChange))}
        >
          Enable
        </button>
      )}
      {confirming ? (
        <fieldset class="confirm">
          <legend>Delete this endpoint and close its pending deliveries?</legend>
          <button
            type="button"
            class="danger"
            onClick={() =>
              run(() => must(client.DELETE("/configs/{id}", path)).then(() => go(href.endpoints())))
            }
          >
            Delete for good
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </fieldset>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete
        </button>
      )}
      <ErrorText error={error} />
    </div>
  );
}
