// Test certificates made with the machine's `openssl`: a CA, then leaf certificates
// it signs (P-256 keys, valid one day) with the subject alternative names asked for.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface CertFiles {
  cert: string;
  key: string;
}

export class TestPki {
  readonly dir = mkdtempSync(path.join(tmpdir(), "rl-pki-"));
  readonly ca: CertFiles;
  private serial = 1;

  constructor(readonly name = "test-ca") {
    this.ca = { cert: this.file(`${name}.crt`), key: this.file(`${name}.key`) };
    openssl([
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
      "-keyout",
      this.ca.key,
      "-out",
      this.ca.cert,
    ]);
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  /** A leaf certificate for `cn` with `san` (e.g. "DNS:localhost,IP:127.0.0.1"), signed by this CA. */
  issue(cn: string, san: string, usage: "serverAuth" | "clientAuth"): CertFiles {
    const base = this.file(`${cn}-${this.serial}`);
    const out = { cert: `${base}.crt`, key: `${base}.key` };
    openssl([
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-subj",
      `/CN=${cn}`,
      "-keyout",
      out.key,
      "-out",
      `${base}.csr`,
    ]);
    writeFileSync(
      `${base}.ext`,
      `subjectAltName=${san}\nextendedKeyUsage=${usage}\nkeyUsage=digitalSignature\nbasicConstraints=CA:FALSE\n`,
    );
    openssl([
      "x509",
      "-req",
      "-in",
      `${base}.csr`,
      "-CA",
      this.ca.cert,
      "-CAkey",
      this.ca.key,
      "-set_serial",
      String(this.serial++),
      "-days",
      "1",
      "-extfile",
      `${base}.ext`,
      "-out",
      out.cert,
    ]);
    return out;
  }

  read(file: string): Buffer {
    return readFileSync(file);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}
