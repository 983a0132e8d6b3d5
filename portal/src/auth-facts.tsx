// The endpoint screen's account of its auth: each configured kind with its public parts
// (user name, token URL, client ID, scope, audience, whether a certificate and CA are set);
// credentials are masked by the API and never shown.
import type { EndpointAuth } from "./api";

export function AuthFacts({ auth }: { auth: EndpointAuth | undefined }) {
  if (!auth) return null;
  const { basic, bearer, oauth2, tls } = auth;
  return (
    <>
      {basic || bearer || oauth2 ? (
        <>
          <dt>Authentication</dt>
          <dd class="auth-facts">
            {basic ? `HTTP Basic as ${basic.username} (password hidden)` : null}
            {bearer ? "Bearer token (hidden)" : null}
            {oauth2 ? (
              <>
                OAuth 2.0 client credentials: token URL <code>{oauth2.tokenUrl}</code>, client ID{" "}
                <code>{oauth2.clientId}</code>
                {oauth2.scope ? (
                  <>
                    , scope <code>{oauth2.scope}</code>
                  </>
                ) : null}
                {oauth2.audience ? (
                  <>
                    , audience <code>{oauth2.audience}</code>
                  </>
                ) : null}{" "}
                (client secret hidden)
              </>
            ) : null}
          </dd>
        </>
      ) : null}
      {tls ? (
        <>
          <dt>Mutual TLS</dt>
          <dd class="tls-facts">
            {[
              tls.certificate ? "client certificate (private key hidden)" : null,
              tls.caBundle ? "custom CA bundle" : "system CAs",
            ]
              .filter(Boolean)
              .join(", ")}
            {tls.certificate ? (
              <details>
                <summary>Certificate</summary>
                <pre class="pem">{tls.certificate}</pre>
              </details>
            ) : null}
          </dd>
        </>
      ) : null}
    </>
  );
}
