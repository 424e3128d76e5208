// Every response the HTTP helpers receive, kept for the end-of-run check against the OpenAPI
// document (openapi-check.ts), so an answer the document does not describe fails the build.
export interface RecordedResponse {
  readonly method: string;
  /** URL path without the query, e.g. /api/v1/data. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON, or the text when the body is not JSON. */
  readonly body: unknown;
  /** The test that made the request, to point at it when the check fails. */
  readonly test: string | undefined;
}

const recorded: RecordedResponse[] = [];
let currentTest: string | undefined;

export function setCurrentTest(title: string | undefined): void {
  currentTest = title;
}

export function recordResponse(url: string, method: string, res: Response, text: string): void {
  const contentType = res.headers.get('content-type') ?? '';
  let body: unknown = text;
  if (contentType.includes('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  recorded.push({
    method: method.toUpperCase(),
    path: new URL(url).pathname,
    status: res.status,
    contentType,
    headers: Object.fromEntries(res.headers),
    body,
    test: currentTest,
  });
}

export function recordedResponses(): readonly RecordedResponse[] {
  return recorded;
}
