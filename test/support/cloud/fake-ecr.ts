import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for Amazon ECR's `GetAuthorizationToken`, built from the API reference:
 * an AWS JSON 1.1 `POST /` with `X-Amz-Target: AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken`
 * signed with SigV4, answered with `{"authorizationData":[{"authorizationToken": base64("AWS:<password>"),
 * "expiresAt": <epoch seconds>, "proxyEndpoint": "https://<registry>"}]}`
 * (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_GetAuthorizationToken.html,
 * https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_AuthorizationData.html), and errors
 * as `{"__type": "AccessDeniedException", "message": ...}` with HTTP 400
 * (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/CommonErrors.html).
 */
export interface FakeEcr {
  url: string;
  /** GetAuthorizationToken calls answered so far. */
  requests(): number;
  /** The access key ids the calls were signed with (from the SigV4 `Credential=`). */
  accessKeyIds(): string[];
  /** STS AssumeRole calls answered (the same endpoint serves both), with the RoleArn asked for. */
  assumedRoles(): string[];
  /** What the next calls answer. */
  set(answer: { password: string; expiresAt: Date } | { denied: string }): void;
  close(): Promise<void>;
}

/** The access key id of the temporary credentials the fake STS hands out. */
export const ASSUMED_ACCESS_KEY_ID = "ASIAFERRYASSUMED0001";

export async function startFakeEcr(options: {
  proxyEndpoint: string;
  password: string;
  expiresAt: Date;
}): Promise<FakeEcr> {
  let answer: { password: string; expiresAt: Date } | { denied: string } = options;
  let count = 0;
  const keys: string[] = [];
  const roles: string[] = [];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      if (req.method === "POST" && form.get("Action") === "AssumeRole") {
        // STS AssumeRole, Query protocol with an XML answer
        // (https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html).
        roles.push(form.get("RoleArn") ?? "");
        res.writeHead(200, { "content-type": "text/xml" });
        res.end(
          `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
            `<AccessKeyId>${ASSUMED_ACCESS_KEY_ID}</AccessKeyId><SecretAccessKey>assumed-secret-key-canary</SecretAccessKey>` +
            `<SessionToken>assumed-session-token-canary</SessionToken><Expiration>${new Date(Date.now() + 3600_000).toISOString()}</Expiration>` +
            `</Credentials><AssumedRoleUser><Arn>${form.get("RoleArn") ?? ""}/ferry</Arn><AssumedRoleId>AROAFERRYTEST:ferry</AssumedRoleId></AssumedRoleUser>` +
            `</AssumeRoleResult><ResponseMetadata><RequestId>ferry-test</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
        return;
      }
      if (
        req.method !== "POST" ||
        req.headers["x-amz-target"] !== "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken"
      ) {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify({ __type: "UnknownOperationException", message: "unknown operation" }));
        return;
      }
      count += 1;
      const credential = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ""));
      keys.push(credential?.[1] ?? "");
      if ("denied" in answer) {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify({ __type: "AccessDeniedException", message: answer.denied }));
        return;
      }
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(
        JSON.stringify({
          authorizationData: [
            {
              authorizationToken: Buffer.from(`AWS:${answer.password}`).toString("base64"),
              expiresAt: answer.expiresAt.getTime() / 1000,
              proxyEndpoint: options.proxyEndpoint,
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    accessKeyIds: () => [...keys],
    assumedRoles: () => [...roles],
    set: (next) => (answer = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
