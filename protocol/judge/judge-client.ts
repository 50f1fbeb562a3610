/**
 * One call of a judge over HTTP(S) (the wire: judge-wire.ts): POST the episode's request, wait at
 * most `timeoutMs` for the whole answer, read at most JUDGE_MAX_REPLY_BYTES, and return the verdict.
 * Every way it can go wrong is a JudgeError with a plain sentence (the caller sends the episode to a
 * person, or refuses the submission at pre-flight).
 */
import { describeSocketError, readBoundedText } from "../http/peer-answers.js";
import { encodeJudgeRequest, JudgeError, JUDGE_MAX_REPLY_BYTES, parseJudgeVerdict, type JudgeRequest, type JudgeVerdict } from "./judge-wire.js";

/** Asks the judge at `url` about one episode; throws JudgeError when it gives no verdict. */
export async function callJudge(url: string, request: JudgeRequest, timeoutMs: number, signal?: AbortSignal): Promise<JudgeVerdict> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const onOuter = () => abort.abort();
  signal?.addEventListener("abort", onOuter, { once: true });
  const timedOut = () => new JudgeError("timeout", `the judge at ${url} gave no answer within ${timeoutMs} ms`);
  try {
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: encodeJudgeRequest(request), signal: abort.signal, redirect: "error" });
    } catch (error) {
      if (abort.signal.aborted) throw timedOut();
      throw new JudgeError("unreachable", `could not reach the judge at ${url}: ${describeSocketError(error)}`);
    }
    let text: string;
    try {
      text = await readBoundedText(response, JUDGE_MAX_REPLY_BYTES, () => new JudgeError("bad_reply", `the judge's answer is longer than ${JUDGE_MAX_REPLY_BYTES} bytes`));
    } catch (error) {
      if (error instanceof JudgeError) throw error;
      throw abort.signal.aborted ? timedOut() : new JudgeError("unreachable", `the judge at ${url} broke off its answer: ${describeSocketError(error)}`);
    }
    if (!response.ok) throw new JudgeError("http_status", `the judge at ${url} answered HTTP ${response.status}: ${JSON.stringify(text.slice(0, 200))}`);
    return parseJudgeVerdict(text);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onOuter);
  }
}
