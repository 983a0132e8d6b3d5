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

  /**
   * A JWT valid for 10 minutes; write scope and subject "operator" unless the claims say
   * otherwise. `iat`: issued now unless a time in seconds is given, or none with false.
   */
  sign(
    claims: Record<string, unknown>,
    iat: number | false = Math.floor(Date.now() / 1000),
  ): Promise<string> {
    const jwt = new SignJWT({ scope: "webhooks:write", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(TEST_ISSUER)
      .setAudience(TEST_AUDIENCE)
      .setSubject(String(claims.sub ?? "operator"))
      .setExpirationTime("10m");
    return (iat === false ? jwt : jwt.setIssuedAt(iat)).sign(this.key);
  }

  close(): void {
    this.server.close();
  }
}
