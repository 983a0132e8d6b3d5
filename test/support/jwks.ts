import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

// A real JWKS endpoint serving one RS256 key, and the operator JWTs it verifies.

export const TEST_ISSUER = "https://issuer.test/";
export const TEST_AUDIENCE = "webhooks-api";

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

export class TestJwks {
  private constructor(
    readonly url: string,
    private readonly server: Server,
    private readonly key: KeyLike,
  ) {}

  static async start(): Promise<TestJwks> {
    const pair = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    return new TestJwks(url, server, pair.privateKey);
  }

  /** The `serve` flags that turn authentication on against this JWKS. */
  get args(): string[] {
    return ["--auth-jwks-url", this.url, "--auth-issuer", TEST_ISSUER, "--auth-audience", TEST_AUDIENCE];
  }

  /** A JWT valid for 10 minutes; write scope and subject "operator" unless the claims say otherwise. */
  sign(claims: Record<string, unknown>): Promise<string> {
    return new SignJWT({ scope: "webhooks:write", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(TEST_ISSUER)
      .setAudience(TEST_AUDIENCE)
      .setSubject(String(claims.sub ?? "operator"))
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(this.key);
  }

  close(): void {
    this.server.close();
  }
}
