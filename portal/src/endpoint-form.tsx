// Create or edit an endpoint: URL, name, event types from the catalog, payload filter,
// custom headers and auth. Credentials are write-only: the form never shows a stored one,
// and a blank credential on edit keeps the stored value, unless the endpoint moves to another
// origin (or the token URL changes): the API then wants the credentials again, so the form
// says so and stops offering "unchanged". Validation errors of the API are shown next to the
// field they name.
import { useEffect, useState } from "preact/hooks";
import {
  ApiError,
  asApiError,
  type Client,
  type Config,
  type ConfigUser,
  type EndpointAuthChange,
  type EventType,
  must,
} from "./api";
import {
  OAuthFields,
  type OAuthInput,
  oauthChange,
  oauthInputOf,
  TlsFields,
  type TlsInput,
  tlsChange,
  tlsInputOf,
} from "./auth-fields";
import { usePortal } from "./context";
import {
  DestinationFields,
  type DestinationInput,
  destinationInputOf,
  destinationOfInput,
} from "./destination-fields";
import { EventTypePicker } from "./event-type-picker";
import { type FormField, fieldOf } from "./field-errors";
import { LoadFailure } from "./messages";
import { go, href } from "./router";

type AuthKind = "none" | "basic" | "bearer" | "oauth2";
interface HeaderRow {
  name: string;
  value: string;
  stored: boolean;
}

/** What the auth and headers part of the form holds. */
interface AuthForm {
  headers: HeaderRow[];
  authKind: AuthKind;
  storedAuth: AuthKind;
  username: string;
  password: string;
  token: string;
  oauth: OAuthInput;
  tls: TlsInput;
}

/** How a field shows the API's error about it. */
interface FieldErrors {
  error: (field: FormField) => preact.JSX.Element | null;
  describedBy: (field: FormField) => string | undefined;
}

/** The form's state, filled from the catalog and, when editing, from the stored config. */
function useEndpointFormState(client: Client, id: string | undefined) {
  const [catalog, setCatalog] = useState<EventType[] | null>(null);
  const [current, setCurrent] = useState<Config | null>(null);
  const [loadError, setLoadError] = useState<ApiError | undefined>(undefined);
  const [endpoint, setEndpoint] = useState("");
  const [name, setName] = useState("");
  const [picked, setPicked] = useState<string[]>([]);
  const [others, setOthers] = useState("");
  const [filter, setFilter] = useState("");
  const [signatureHeaders, setSignatureHeaders] = useState("");
  const [maxConcurrency, setMaxConcurrency] = useState("");
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const [authKind, setAuthKind] = useState<AuthKind>("none");
  const [storedAuth, setStoredAuth] = useState<AuthKind>("none");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [token, setToken] = useState("");
  const [oauth, setOauth] = useState<OAuthInput>(oauthInputOf(undefined));
  const [tls, setTls] = useState<TlsInput>(tlsInputOf(undefined));
  const [destination, setDestination] = useState<DestinationInput>(destinationInputOf(undefined));
  const [errors, setErrors] = useState<Partial<Record<FormField, string>>>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    (async () => {
      const types = (await must(client.GET("/event-types", { params: { query: { pageSize: "1000" } } })))
        .cursor.data;
      setCatalog(types);
      if (!id) return;
      const config = (await must(client.GET("/configs/{id}", { params: { path: { id } } }))).data;
      setCurrent(config);
      setEndpoint(config.endpoint);
      setName(config.name);
      const known = new Set(types.map((t) => t.name));
      setPicked(config.eventTypes.filter((t) => known.has(t)));
      setOthers(config.eventTypes.filter((t) => !known.has(t)).join(", "));
      setFilter(config.filter ? JSON.stringify(config.filter, null, 2) : "");
      setSignatureHeaders(config.signatureHeaders ?? "");
      setMaxConcurrency(config.maxConcurrency === undefined ? "" : String(config.maxConcurrency));
      const auth = config.auth ?? {};
      setHeaders((auth.headers ?? []).map((h) => ({ name: h.name ?? "", value: "", stored: true })));
      const kind: AuthKind = auth.basic ? "basic" : auth.bearer ? "bearer" : auth.oauth2 ? "oauth2" : "none";
      setAuthKind(kind);
      setStoredAuth(kind);
      setUsername(auth.basic?.username ?? "");
      setOauth(oauthInputOf(auth.oauth2));
      setTls(tlsInputOf(auth.tls));
      setDestination(destinationInputOf(config.destination));
    })().catch((err: unknown) => setLoadError(asApiError(err)));
  }, [client, id]);
  return {
    catalog,
    setCatalog,
    current,
    setCurrent,
    loadError,
    setLoadError,
    endpoint,
    setEndpoint,
    name,
    setName,
    picked,
    setPicked,
    others,
    setOthers,
    filter,
    setFilter,
    signatureHeaders,
    setSignatureHeaders,
    maxConcurrency,
    setMaxConcurrency,
    headers,
    setHeaders,
    authKind,
    setAuthKind,
    storedAuth,
    setStoredAuth,
    username,
    setUsername,
    password,
    setPassword,
    token,
    setToken,
    oauth,
    setOauth,
    tls,
    setTls,
    destination,
    setDestination,
    errors,
    setErrors,
    busy,
    setBusy,
  };
}

/** The origin of a URL being typed, or undefined while it does not parse. */
const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/** True when the edited endpoint is at another origin than the stored one, which holds credentials. */
function movesCredentials(endpoint: string, current: Config | null): boolean {
  const a = current?.auth;
  if (!current || !(a?.headers?.length || a?.basic || a?.bearer || a?.oauth2)) return false;
  const to = originOf(endpoint);
  return to !== undefined && to !== originOf(current.endpoint);
}

export function EndpointForm({ id }: { id?: string }) {
  const { client, can } = usePortal();
  const f = useEndpointFormState(client, id);

  if (f.loadError) return <LoadFailure error={f.loadError} what="This endpoint" />;
  if (!f.catalog || (id && !f.current)) return <p>Loading…</p>;

  const submit = async (e: Event) => {
    e.preventDefault();
    const { found, body } = configBodyOf(f, f.current);
    f.setErrors(found);
    if (!body) return;
    const destination = destinationOfInput(f.destination, f.current?.destination);
    if (destination) body.destination = destination;
    // A broker's endpoint is derived from its destination; endpoint auth is HTTP's only.
    if (f.destination.type !== "http") delete body.endpoint;
    const auth = f.destination.type === "http" ? authChangeOf(f, f.current) : undefined;
    if (auth) body.auth = auth;
    f.setBusy(true);
    try {
      await saveConfig(client, id, body, can("secrets"));
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) f.setErrors({ [fieldOf(err.message)]: err.message });
      else f.setErrors({ form: err instanceof Error ? err.message : String(err) });
    } finally {
      f.setBusy(false);
    }
  };

  const fieldError = (field: FormField) =>
    f.errors[field] ? (
      <p class="field-error" id={`${field}-error`} role="alert">
        {f.errors[field]}
      </p>
    ) : null;
  const describedBy = (field: FormField) => (f.errors[field] ? `${field}-error` : undefined);
  // A stored credential is bound to the endpoint's origin: at another one it must be typed again.
  const moved = movesCredentials(f.endpoint, f.current);
  const http = f.destination.type === "http";

  return (
    <section aria-labelledby="form-title">
      <h1 id="form-title">{id ? "Edit endpoint" : "Add endpoint"}</h1>
      <form class="endpoint-form" onSubmit={submit} noValidate>
        <DestinationFields
          value={f.destination}
          set={(patch) => f.setDestination({ ...f.destination, ...patch })}
          storedCredential={f.current?.destination?.type === f.destination.type}
          error={fieldError}
        />
        <MainFields
          value={f}
          set={{
            endpoint: f.setEndpoint,
            name: f.setName,
            picked: f.setPicked,
            others: f.setOthers,
            filter: f.setFilter,
            signatureHeaders: f.setSignatureHeaders,
            maxConcurrency: f.setMaxConcurrency,
          }}
          catalog={f.catalog}
          http={http}
          moved={moved}
          eventTypesError={f.errors.eventTypes}
          error={fieldError}
          describedBy={describedBy}
        />
        {http ? <HttpAuthFields f={f} moved={moved} error={fieldError} describedBy={describedBy} /> : null}
        {fieldError("form")}
        <div class="actions">
          <button type="submit" class="primary" disabled={f.busy}>
            {id ? "Save endpoint" : "Create endpoint"}
          </button>
          <a class="button" href={id ? href.endpoint(id) : href.endpoints()}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}

/** Custom headers, authentication and client TLS: what only an HTTP destination sends. */
function HttpAuthFields({
  f,
  moved,
  error,
  describedBy,
}: { f: ReturnType<typeof useEndpointFormState>; moved: boolean } & FieldErrors) {
  return (
    <>
      <HeaderFields
        headers={moved ? f.headers.map((h) => ({ ...h, stored: false })) : f.headers}
        onChange={f.setHeaders}
        error={error}
        describedBy={describedBy}
      />
      <AuthFields
        value={{
          ...f,
          kind: f.authKind,
          stored: moved ? "none" : f.storedAuth,
          storedTokenUrl: f.current?.auth?.oauth2?.tokenUrl,
        }}
        set={{
          kind: f.setAuthKind,
          username: f.setUsername,
          password: f.setPassword,
          token: f.setToken,
          oauth: f.setOauth,
        }}
        error={error}
        describedBy={describedBy}
      />
      <TlsFields
        value={f.tls}
        stored={Boolean(f.current?.auth?.tls?.certificate)}
        onChange={f.setTls}
        error={error}
        describedBy={describedBy}
      />
    </>
  );
}

/** What the main part of the form holds: where to send, its name, which events, which payloads. */
interface MainForm {
  endpoint: string;
  name: string;
  picked: string[];
  others: string;
  filter: string;
  /** "" for the deployment's default, else svc or standard. */
  signatureHeaders: string;
  /** "" for no cap, else a whole number of sends. */
  maxConcurrency: string;
}

/**
 * The config to write, or the errors of the fields the API would refuse anyway: a filter
 * that is not JSON, no event type. A cleared filter removes a stored one.
 */
function configBodyOf(
  f: MainForm,
  current: Config | null,
): { found: Partial<Record<FormField, string>>; body?: ConfigUser } {
  const { endpoint, name, picked, others, filter, signatureHeaders, maxConcurrency } = f;
  const found: Partial<Record<FormField, string>> = {};
  let parsedFilter: Record<string, unknown> | null | undefined;
  if (filter.trim() === "") parsedFilter = current?.filter ? null : undefined;
  else {
    try {
      parsedFilter = JSON.parse(filter);
    } catch (err) {
      found.filter = `filter is not valid JSON: ${(err as Error).message}`;
    }
  }
  const eventTypes = [
    ...picked,
    ...others
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  ];
  if (eventTypes.length === 0) found.eventTypes = "eventTypes: pick at least one event type";
  const cap = maxConcurrency.trim();
  if (cap !== "" && !/^[1-9]\d*$/.test(cap))
    found.maxConcurrency = `maxConcurrency: "${cap}" is not a whole number of sends (1 or more), or empty for no cap`;
  if (Object.keys(found).length > 0) return { found };
  const body: ConfigUser = {
    endpoint,
    eventTypes,
    ...(name ? { name } : {}),
    ...(parsedFilter !== undefined ? { filter: parsedFilter as ConfigUser["filter"] } : {}),
    signatureHeaders: (signatureHeaders || null) as ConfigUser["signatureHeaders"],
    // Empty removes a stored cap (null); the API bounds the number.
    maxConcurrency: cap === "" ? null : Number(cap),
  };
  return { found, body };
}

/**
 * Writes the config (PUT for an edit, POST for a new one), then opens its page. For a session
 * with "secrets", PUT replaces the secret (a new one when absent): the current one is resent.
 * Without it the API keeps the stored secret, and would refuse one given.
 */
async function saveConfig(
  client: Client,
  id: string | undefined,
  body: ConfigUser,
  canSecrets: boolean,
): Promise<void> {
  if (id) {
    const secret = canSecrets
      ? (await must(client.GET("/configs/{id}/secret", { params: { path: { id } } }))).data.secret
      : undefined;
    await must(
      client.PUT("/configs/{id}", {
        params: { path: { id } },
        body: { ...body, ...(secret !== undefined ? { secret } : {}) },
      }),
    );
    go(href.endpoint(id));
  } else {
    const created = await must(client.POST("/configs", { body }));
    go(href.endpoint(created.data.id));
  }
}

/** Endpoint URL, name, event types and payload filter. */
function MainFields({
  value,
  set,
  catalog,
  http,
  moved,
  eventTypesError,
  error,
  describedBy,
}: {
  value: MainForm;
  set: { [K in keyof MainForm]: (v: MainForm[K]) => void };
  catalog: EventType[];
  /** An HTTP destination: it has an endpoint URL (a broker's is derived). */
  http: boolean;
  /** The endpoint moves its stored credentials to another origin. */
  moved: boolean;
  eventTypesError: string | undefined;
} & FieldErrors) {
  return (
    <>
      {http ? (
        <>
          <label for="endpoint-url">Endpoint URL</label>
          <input
            id="endpoint-url"
            type="url"
            required
            placeholder="https://example.com/webhooks"
            value={value.endpoint}
            aria-invalid={error("endpoint") ? "true" : undefined}
            aria-describedby={
              [describedBy("endpoint"), moved ? "endpoint-moved" : undefined].filter(Boolean).join(" ") ||
              undefined
            }
            onInput={(e) => set.endpoint(e.currentTarget.value)}
          />
          {moved ? (
            <p class="muted small" id="endpoint-moved" role="status">
              This is another origin than the stored endpoint's: enter the credentials again (headers and
              authentication), or remove them. Stored credentials are never sent to a new origin.
            </p>
          ) : null}
          {error("endpoint")}
        </>
      ) : (
        error("endpoint")
      )}
      <label for="endpoint-name">Name (optional)</label>
      <input
        id="endpoint-name"
        type="text"
        value={value.name}
        aria-describedby={describedBy("name")}
        onInput={(e) => set.name(e.currentTarget.value)}
      />
      {error("name")}
      <EventTypePicker
        catalog={catalog}
        picked={value.picked}
        others={value.others}
        onPick={set.picked}
        onOthers={set.others}
        error={eventTypesError}
      />
      <label for="endpoint-filter">Payload filter (optional JSON)</label>
      <textarea
        id="endpoint-filter"
        rows={4}
        placeholder='{"payload.amount": {"$gte": 100}}'
        value={value.filter}
        aria-invalid={error("filter") ? "true" : undefined}
        aria-describedby={describedBy("filter")}
        onInput={(e) => set.filter(e.currentTarget.value)}
      />
      {error("filter")}
      <SignatureHeadersField
        value={value.signatureHeaders}
        onChange={set.signatureHeaders}
        error={error}
        describedBy={describedBy}
      />
      <label for="max-concurrency">Sends at once (optional)</label>
      <input
        id="max-concurrency"
        inputMode="numeric"
        placeholder="no cap"
        value={value.maxConcurrency}
        aria-invalid={error("maxConcurrency") ? "true" : undefined}
        aria-describedby={["max-concurrency-help", describedBy("maxConcurrency")].filter(Boolean).join(" ")}
        onInput={(e) => set.maxConcurrency(e.currentTarget.value)}
      />
      <p class="muted small" id="max-concurrency-help">
        The most deliveries sent to this endpoint at the same time; the others wait their turn.
      </p>
      {error("maxConcurrency")}
    </>
  );
}

/** Which names the signature travels under: the product's, Standard Webhooks', or the deployment's choice. */
function SignatureHeadersField({
  value,
  onChange,
  error,
  describedBy,
}: { value: string; onChange: (v: string) => void } & FieldErrors) {
  return (
    <>
      <label for="signature-headers">Signature headers</label>
      <select
        id="signature-headers"
        value={value}
        aria-invalid={error("signatureHeaders") ? "true" : undefined}
        aria-describedby={["signature-headers-help", describedBy("signatureHeaders")]
          .filter(Boolean)
          .join(" ")}
        onChange={(e) => onChange(e.currentTarget.value)}
      >
        <option value="">The service's default</option>
        <option value="svc">svc-webhook-id, svc-webhook-timestamp, svc-webhook-signature</option>
        <option value="standard">webhook-id, webhook-timestamp, webhook-signature (Standard Webhooks)</option>
      </select>
      <p class="muted small" id="signature-headers-help">
        With the Standard Webhooks names, its libraries verify deliveries unchanged, given this endpoint's
        secret as it is.
      </p>
      {error("signatureHeaders")}
    </>
  );
}

/** The auth and headers as a merge: only what the user wrote, null for a removed kind. */
function authChangeOf(f: AuthForm, current: Config | null): EndpointAuthChange | undefined {
  const { headers, authKind, storedAuth, username, password, token, oauth, tls } = f;
  const change: EndpointAuthChange = {};
  const rows = headers.filter((h) => h.name.trim() !== "");
  const hadHeaders = (current?.auth?.headers?.length ?? 0) > 0;
  if (rows.length > 0 || hadHeaders)
    change.headers =
      rows.length === 0
        ? null
        : rows.map((h) => (h.value === "" && h.stored ? { name: h.name } : { name: h.name, value: h.value }));
  if (authKind === "basic") change.basic = { username, ...(password ? { password } : {}) };
  if (authKind === "bearer" && (token || storedAuth !== "bearer")) change.bearer = { token };
  if (authKind === "oauth2") change.oauth2 = oauthChange(oauth, current?.auth?.oauth2);
  if (storedAuth !== "none" && authKind !== storedAuth) change[storedAuth] = null;
  const tlsChanged = tlsChange(tls, current?.auth?.tls);
  if (tlsChanged !== undefined) change.tls = tlsChanged;
  return Object.keys(change).length > 0 ? change : undefined;
}

/** Custom headers: a stored value is never shown, and kept when its field is left blank. */
function HeaderFields({
  headers,
  onChange,
  error,
  describedBy,
}: { headers: HeaderRow[]; onChange: (rows: HeaderRow[]) => void } & FieldErrors) {
  return (
    <fieldset aria-describedby={describedBy("headers")}>
      <legend>Custom headers</legend>
      {headers.map((h, i) => (
        <div class="header-row" key={i}>
          <label for={`header-name-${i}`}>Header name</label>
          <input
            id={`header-name-${i}`}
            type="text"
            value={h.name}
            onInput={(e) => {
              const value = e.currentTarget.value;
              onChange(headers.map((r, j) => (j === i ? { ...r, name: value, stored: false } : r)));
            }}
          />
          <Credential
            id={`header-value-${i}`}
            label="Value"
            stored={h.stored}
            value={h.value}
            onInput={(value) => onChange(headers.map((r, j) => (j === i ? { ...r, value } : r)))}
          />
          <button type="button" onClick={() => onChange(headers.filter((_, j) => j !== i))}>
            Remove header {h.name}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...headers, { name: "", value: "", stored: false }])}>
        Add header
      </button>
      {error("headers")}
    </fieldset>
  );
}

/** The Authorization kind (none, basic, bearer, OAuth 2.0) and its credentials. */
function AuthFields({
  value,
  set,
  error,
  describedBy,
}: {
  value: Pick<AuthForm, "username" | "password" | "token" | "oauth"> & {
    kind: AuthKind;
    /** The kind whose stored credential a blank field keeps ("none" once the endpoint moves). */
    stored: AuthKind;
    /** The stored token URL: the client secret is bound to it. */
    storedTokenUrl: string | undefined;
  };
  set: {
    kind: (kind: AuthKind) => void;
    username: (v: string) => void;
    password: (v: string) => void;
    token: (v: string) => void;
    oauth: (v: OAuthInput) => void;
  };
} & FieldErrors) {
  return (
    <fieldset aria-describedby={describedBy("auth")}>
      <legend>Authentication</legend>
      <label for="auth-kind">Kind</label>
      <select id="auth-kind" value={value.kind} onChange={(e) => set.kind(e.currentTarget.value as AuthKind)}>
        <option value="none">None</option>
        <option value="basic">HTTP Basic</option>
        <option value="bearer">Bearer token</option>
        <option value="oauth2">OAuth 2.0 client credentials</option>
      </select>
      {value.kind === "basic" ? (
        <>
          <label for="auth-username">Username</label>
          <input
            id="auth-username"
            type="text"
            value={value.username}
            onInput={(e) => set.username(e.currentTarget.value)}
          />
          <Credential
            id="auth-password"
            label="Password"
            stored={value.stored === "basic"}
            value={value.password}
            onInput={set.password}
          />
        </>
      ) : null}
      {value.kind === "bearer" ? (
        <Credential
          id="auth-token"
          label="Token"
          stored={value.stored === "bearer"}
          value={value.token}
          onInput={set.token}
        />
      ) : null}
      {value.kind === "oauth2" ? (
        <OAuthFields
          value={value.oauth}
          stored={value.stored === "oauth2" && value.oauth.tokenUrl.trim() === value.storedTokenUrl}
          onChange={set.oauth}
          error={error}
          describedBy={describedBy}
        />
      ) : null}
      <p class="muted small">Credentials are write-only: they are never shown again.</p>
      {error("auth")}
    </fieldset>
  );
}

/** A write-only value: never prefilled; a stored one reads "unchanged" and is kept when left blank. */
function Credential(props: {
  id: string;
  label: string;
  stored: boolean;
  value: string;
  onInput: (value: string) => void;
}) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="password"
        autocomplete="off"
        placeholder={props.stored ? "unchanged" : ""}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </>
  );
}
