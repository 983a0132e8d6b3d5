// The OAuth 2.0 client-credentials and mutual-TLS parts of the endpoint form, and the merge
// each sends (PATCH semantics of the API's `auth`): a public part is prefilled and sent when
// changed, a secret (client secret, private key) is never shown and is sent only when typed.
import type { EndpointAuth, EndpointAuthChange } from "./api";
import type { FormField } from "./field-errors";

export interface OAuthInput {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  audience: string;
}
export interface TlsInput {
  on: boolean;
  certificate: string;
  privateKey: string;
  caBundle: string;
}

export const oauthInputOf = (o: EndpointAuth["oauth2"]): OAuthInput => ({
  tokenUrl: o?.tokenUrl ?? "",
  clientId: o?.clientId ?? "",
  clientSecret: "",
  scope: o?.scope ?? "",
  audience: o?.audience ?? "",
});
export const tlsInputOf = (t: EndpointAuth["tls"]): TlsInput => ({
  on: Boolean(t),
  certificate: t?.certificate ?? "",
  privateKey: "",
  caBundle: t?.caBundle ?? "",
});

/** The oauth2 merge: every public field as typed (a cleared optional one removed), the secret when typed. */
export function oauthChange(o: OAuthInput, stored: EndpointAuth["oauth2"]): EndpointAuthChange["oauth2"] {
  const optional = (value: string, was: string | undefined) =>
    value.trim() !== "" ? value.trim() : was !== undefined ? null : undefined;
  const scope = optional(o.scope, stored?.scope);
  const audience = optional(o.audience, stored?.audience);
  return {
    tokenUrl: o.tokenUrl.trim(),
    clientId: o.clientId,
    ...(o.clientSecret !== "" ? { clientSecret: o.clientSecret } : {}),
    ...(scope !== undefined ? { scope } : {}),
    ...(audience !== undefined ? { audience } : {}),
  };
}

/** The tls merge, or undefined when nothing changed (the API refuses an empty one). */
export function tlsChange(t: TlsInput, stored: EndpointAuth["tls"]): EndpointAuthChange["tls"] | undefined {
  if (!t.on) return stored ? null : undefined;
  const change: NonNullable<EndpointAuthChange["tls"]> = {};
  if (t.certificate !== (stored?.certificate ?? "") && t.certificate !== "")
    change.certificate = t.certificate;
  if (t.privateKey !== "") change.privateKey = t.privateKey;
  if (t.caBundle !== (stored?.caBundle ?? "")) change.caBundle = t.caBundle === "" ? null : t.caBundle;
  // Turned on with nothing to send: the API then says what is missing, next to the certificate.
  if (!stored && Object.keys(change).length === 0) change.certificate = "";
  return Object.keys(change).length > 0 ? change : undefined;
}

interface FieldProps {
  id: string;
  field: FormField;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error: (field: FormField) => preact.JSX.Element | null;
  describedBy: (field: FormField) => string | undefined;
  /** A write-only value: never prefilled, "unchanged" while a stored one is kept. */
  secret?: { stored: boolean };
  multiline?: boolean;
  placeholder?: string;
}

function Field(p: FieldProps) {
  const common = {
    id: p.id,
    value: p.value,
    placeholder: p.secret?.stored ? "unchanged" : p.placeholder,
    "aria-invalid": p.error(p.field) ? ("true" as const) : undefined,
    "aria-describedby": p.describedBy(p.field),
    autocomplete: p.secret ? "off" : undefined,
    spellcheck: p.multiline ? false : undefined,
  };
  return (
    <>
      <label for={p.id}>{p.label}</label>
      {p.multiline ? (
        <textarea {...common} rows={4} class="pem" onInput={(e) => p.onInput(e.currentTarget.value)} />
      ) : p.secret ? (
        <input {...common} type="password" onInput={(e) => p.onInput(e.currentTarget.value)} />
      ) : (
        <input {...common} type="text" onInput={(e) => p.onInput(e.currentTarget.value)} />
      )}
      {p.error(p.field)}
    </>
  );
}

type Shared = Pick<FieldProps, "error" | "describedBy">;

export function OAuthFields(
  props: Shared & { value: OAuthInput; stored: boolean; onChange: (v: OAuthInput) => void },
) {
  const { value, onChange } = props;
  const set = (k: keyof OAuthInput) => (v: string) => onChange({ ...value, [k]: v });
  return (
    <>
      <Field
        {...props}
        id="oauth-token-url"
        field="oauth2.tokenUrl"
        label="Token URL"
        value={value.tokenUrl}
        placeholder="https://auth.example.com/oauth/token"
        onInput={set("tokenUrl")}
      />
      <Field
        {...props}
        id="oauth-client-id"
        field="oauth2.clientId"
        label="Client ID"
        value={value.clientId}
        onInput={set("clientId")}
      />
      <Field
        {...props}
        id="oauth-client-secret"
        field="oauth2.clientSecret"
        label="Client secret"
        value={value.clientSecret}
        secret={{ stored: props.stored }}
        onInput={set("clientSecret")}
      />
      <Field
        {...props}
        id="oauth-scope"
        field="oauth2.scope"
        label="Scope (optional)"
        value={value.scope}
        onInput={set("scope")}
      />
      <Field
        {...props}
        id="oauth-audience"
        field="oauth2.audience"
        label="Audience (optional)"
        value={value.audience}
        onInput={set("audience")}
      />
    </>
  );
}

export function TlsFields(
  props: Shared & { value: TlsInput; stored: boolean; onChange: (v: TlsInput) => void },
) {
  const { value, onChange } = props;
  const set = (k: "certificate" | "privateKey" | "caBundle") => (v: string) => onChange({ ...value, [k]: v });
  return (
    <fieldset aria-describedby={props.describedBy("tls")}>
      <legend>Mutual TLS</legend>
      <div class="check-row">
        <input
          type="checkbox"
          id="tls-on"
          checked={value.on}
          onChange={(e) => onChange({ ...value, on: e.currentTarget.checked })}
        />
        <label for="tls-on">Use mutual TLS (client certificate, custom CA)</label>
      </div>
      {value.on ? (
        <>
          <Field
            {...props}
            id="tls-certificate"
            field="tls.certificate"
            label="Client certificate (PEM)"
            value={value.certificate}
            multiline
            placeholder="-----BEGIN CERTIFICATE-----"
            onInput={set("certificate")}
          />
          <Field
            {...props}
            id="tls-private-key"
            field="tls.privateKey"
            label="Private key (PEM)"
            value={value.privateKey}
            multiline
            secret={{ stored: props.stored }}
            placeholder="-----BEGIN PRIVATE KEY-----"
            onInput={set("privateKey")}
          />
          <Field
            {...props}
            id="tls-ca-bundle"
            field="tls.caBundle"
            label="CA bundle (PEM, optional)"
            value={value.caBundle}
            multiline
            placeholder="-----BEGIN CERTIFICATE-----"
            onInput={set("caBundle")}
          />
        </>
      ) : null}
      {props.error("tls")}
    </fieldset>
  );
}
