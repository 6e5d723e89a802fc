/** A self-signed RSA certificate and its key written by `openssl req -x509` into `dir`, valid two days. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export function selfSignedCertificate(
  dir: string,
  name: string,
  options: { subject: string; altName?: string },
): { keyPath: string; certPath: string } {
  const keyPath = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.crt`);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "2",
      "-subj",
      options.subject,
      ...(options.altName ? ["-addext", `subjectAltName=${options.altName}`] : []),
    ],
    { stdio: "ignore" },
  );
  return { keyPath, certPath };
}
