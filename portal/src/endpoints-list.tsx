// The endpoints of the tenant with their health at a glance (24 h window of /stats).
import { useEffect } from "preact/hooks";
import { type Config, type EndpointStats, must } from "./api";
import { usePortal } from "./context";
import { ms, percent } from "./format";
import { useLoad } from "./load";
import { ErrorText } from "./messages";
import { href } from "./router";
import { When } from "./time";

export function EndpointsList() {
  const { client, can } = usePortal();
  // The list first, then each endpoint's health: the links work before the stats arrive.
  const { data: configs, error } = useLoad(async () => (await must(client.GET("/configs"))).cursor.data, []);
  const ids = (configs ?? []).map((c) => c.id).join(",");
  const { data: stats } = useLoad(async () => {
    const all = await Promise.all(
      (configs ?? []).map((c) =>
        must(client.GET("/configs/{id}/stats", { params: { path: { id: c.id } } })).then(
          (s) => [c.id, s.data] as const,
          () => [c.id, undefined] as const,
        ),
      ),
    );
    return new Map(all);
  }, [ids]);
  const data = configs?.map((config) => ({ config, stats: stats?.get(config.id) }));
  // The page's milestones, read by bench/portal/first-load.ts.
  useEffect(() => {
    if (configs) performance.mark("portal:endpoints-shown");
  }, [configs]);
  useEffect(() => {
    if (configs && stats?.size === configs.length) performance.mark("portal:health-shown");
  }, [configs, stats]);
  return (
    <section aria-labelledby="endpoints-title">
      <div class="title-row">
        <h1 id="endpoints-title">Endpoints</h1>
        {can("endpoints") ? (
          <a class="button primary" href={href.newEndpoint()}>
            Add endpoint
          </a>
        ) : null}
      </div>
      <ErrorText error={error} />
      {!data ? (
        error ? null : (
          <p>Loading…</p>
        )
      ) : data.length === 0 ? (
        <p class="empty">No endpoints yet.</p>
      ) : (
        <table class="list stack endpoints">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">Success (24 h)</th>
              <th scope="col">p50 / p99</th>
              <th scope="col">Failing since</th>
            </tr>
          </thead>
          <tbody>
            {data.map(({ config, stats }) => (
              <EndpointRow key={config.id} config={config} stats={stats} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function EndpointRow({ config, stats }: { config: Config; stats: EndpointStats | undefined }) {
  const day = stats?.windows.find((w) => w.window === "24h");
  return (
    <tr>
      <td class="lead">
        <a href={href.endpoint(config.id)}>{config.name || config.endpoint}</a>
        {config.name ? <div class="muted small">{config.endpoint}</div> : null}
        <div class="muted small">{config.eventTypes.join(", ")}</div>
      </td>
      <td data-label="Status">
        <StatusBadge active={config.active} />
        {config.deactivatedReason ? <div class="small warn">{config.deactivatedReason}</div> : null}
      </td>
      <td data-label="Success (24 h)">
        {percent(day?.successRate)}
        {day ? <div class="muted small">{day.attempts} sends</div> : null}
      </td>
      <td data-label="p50 / p99">
        {ms(day?.latencyMs?.p50)} / {ms(day?.latencyMs?.p99)}
      </td>
      <td data-label="Failing since">
        {stats?.failingSince ? (
          <span class="warn">
            <When iso={stats.failingSince} />
          </span>
        ) : (
          "—"
        )}
      </td>
    </tr>
  );
}

export function StatusBadge({ active }: { active: boolean }) {
  return <span class={active ? "badge ok" : "badge off"}>{active ? "Enabled" : "Disabled"}</span>;
}
