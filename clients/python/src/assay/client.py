"""The Assay API client: ``Client(api_key=..., base_url=...)``.

Standard library only (urllib, json, hashlib). Errors raise :class:`assay.AssayError` carrying the
API's error envelope; a 429 (and a 503 on a read) is retried after its ``Retry-After``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO, Union

from . import __version__
from .errors import AssayError, ChecksumMismatch
from .models import Artifact, Episode, EpisodeEvent, Export, Json, Report, Run, RunComparison, StatusEvent
from .sse import read_events

PathLike = Union[str, "os.PathLike[str]"]
Event = Union[StatusEvent, EpisodeEvent]

#: Longest single wait on a Retry-After before giving up (seconds).
MAX_RETRY_WAIT_S = 60.0
CHUNK_BYTES = 1 << 16


_UNSET: Any = object()


class Client:
    """A client of one Assay coordinator.

    ``api_key`` defaults to ``$ASSAY_API_KEY`` and ``base_url`` to ``$ASSAY_BASE_URL`` (else
    ``http://127.0.0.1:8080``). ``max_retries`` bounds the retries of a rate-limited request;
    ``sleep`` is what waits (``time.sleep``; tests may pass their own).
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("ASSAY_API_KEY")
        if not key:
            raise ValueError("no API key: pass api_key=... or set ASSAY_API_KEY (keys start with asy_live_)")
        self.api_key = key
        self.base_url = (base_url or os.environ.get("ASSAY_BASE_URL") or "http://127.0.0.1:8080").rstrip("/")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._sleep = sleep

    # -- HTTP -------------------------------------------------------------------------------------

    def _url(self, path_or_url: str, query: Optional[dict[str, Any]] = None) -> str:
        url = path_or_url if "://" in path_or_url else f"{self.base_url}{path_or_url}"
        params = {k: v for k, v in (query or {}).items() if v is not None}
        return f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode(params)}" if params else url

    def _open(self, method: str, url: str, *, body: Optional[bytes] = None, headers: Optional[dict[str, str]] = None, timeout_s: Optional[float] = None) -> Any:
        """Sends one request (retrying 429s, and 503s of reads, after Retry-After); the open response."""
        all_headers = {"Authorization": f"Bearer {self.api_key}", "User-Agent": f"assay-python/{__version__}", "Accept": "application/json"}
        all_headers.update(headers or {})
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=body, method=method, headers=all_headers)
            try:
                return urllib.request.urlopen(request, timeout=timeout_s or self.timeout_s)
            except urllib.error.HTTPError as answer:
                error = _error_of(answer)
                retryable = answer.code == 429 or (answer.code == 503 and method == "GET")
                if not retryable or attempt >= self.max_retries or error.retry_after_s is None or error.retry_after_s > MAX_RETRY_WAIT_S:
                    raise error from None
                attempt += 1
                self._sleep(error.retry_after_s)
            except urllib.error.URLError as failure:
                raise AssayError(f"could not reach {self.base_url}: {failure.reason}") from None

    def request(self, method: str, path: str, *, json_body: Any = None, query: Optional[dict[str, Any]] = None, headers: Optional[dict[str, str]] = None) -> Json:
        """Any API call answered with JSON, e.g. ``client.request("GET", "/v1/robots")``."""
        body = None
        all_headers = dict(headers or {})
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        with self._open(method, self._url(path, query), body=body, headers=all_headers) as answer:
            return json.loads(answer.read().decode("utf-8"))

    def _list(self, path: str, query: Optional[dict[str, Any]] = None) -> list[Json]:
        return list(self.request("GET", path, query=query)["data"])

    # -- Catalogue ----------------------------------------------------------------------------------

    def robots(self, **query: Any) -> list[Json]:
        """GET /v1/robots (query: ``class``, ``tier``, ...)."""
        return self._list("/v1/robots", query)

    def environments(self) -> list[Json]:
        return self._list("/v1/environments")

    def openapi(self) -> Json:
        """The API's OpenAPI 3.1 document (public)."""
        return self.request("GET", "/v1/openapi.json")

    # -- Runs ----------------------------------------------------------------------------------------

    def submit(self, body: Json, *, idempotency_key: Optional[str] = None, name: Optional[str] = None, metadata: Optional[dict[str, str]] = None) -> Run:
        """POST /v1/runs. Pass ``idempotency_key`` so a retried submission returns the original run.

        ``name`` (a short title) and ``metadata`` (up to 50 string keys of your own, Stripe's rules) are
        laid over the body's own ``name`` and ``metadata``; filter the runs list by them with ``runs()``.
        """
        if name is not None or metadata:
            body = {**body, **({"name": name} if name is not None else {}), **({"metadata": {**body.get("metadata", {}), **metadata}} if metadata else {})}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return Run.from_json(self.request("POST", "/v1/runs", json_body=body, headers=headers))

    def compare(self, policies: dict[str, Json], *, robot: str, environment: str, task: str, episodes: Union[int, str], paired: bool = True, idempotency_key: Optional[str] = None, **fields: Any) -> Run:
        """Submits a compare run of two policies (``{"name": Policy, ...}``); its result's ``comparison`` is A - B."""
        body = {"kind": "compare", "robot": robot, "environment": environment, "task": task, "episodes": episodes, "policies": policies, "paired": paired, **fields}
        return self.submit(body, idempotency_key=idempotency_key)

    def compare_runs(self, run_ids: Sequence[str]) -> RunComparison:
        """GET /v1/comparisons: 2 to 6 completed runs side by side (a compare's policies each a side), with
        every pair's difference, its interval and the sentence it supports, and a warning when pins differ."""
        return RunComparison.from_json(self.request("GET", "/v1/comparisons", query={"runs": ",".join(run_ids)}))

    def run(self, run_id: str) -> Run:
        return Run.from_json(self.request("GET", f"/v1/runs/{_segment(run_id)}"))

    def runs(
        self, *, kind: Optional[str] = None, status: Optional[str] = None, task: Optional[str] = None, robot: Optional[str] = None,
        policy_name: Optional[str] = None, metadata: Optional[dict[str, str]] = None, limit: int = 20, starting_after: Optional[str] = None,
    ) -> list[Run]:
        """GET /v1/runs, newest first; every filter given must match.

        ``task`` is a name (any revision) or ``<name>@v<N>``, ``robot`` a model or ``<model>@<firmware>``,
        ``policy_name`` the name a policy is shown under, ``metadata`` keys that must have exactly these values.
        """
        query: dict[str, Any] = {"kind": kind, "status": status, "task": task, "robot": robot, "policy_name": policy_name, "limit": limit, "starting_after": starting_after}
        query.update({f"metadata[{key}]": value for key, value in (metadata or {}).items()})
        return [Run.from_json(r) for r in self._list("/v1/runs", query)]

    def update_run(self, run_id: str, *, name: Any = _UNSET, metadata: Optional[dict[str, str]] = None) -> Run:
        """POST /v1/runs/{id}: a new ``name`` (``None`` removes it) and metadata keys to set (``""`` removes a key; keys not given are kept)."""
        body: Json = {}
        if name is not _UNSET:
            body["name"] = name
        if metadata is not None:
            body["metadata"] = metadata
        return Run.from_json(self.request("POST", f"/v1/runs/{_segment(run_id)}", json_body=body))

    def cancel(self, run_id: str) -> Run:
        """Cancels a queued or running run; the episodes that ran keep their outcomes."""
        return Run.from_json(self.request("POST", f"/v1/runs/{_segment(run_id)}/cancel"))

    def events(self, run_id: str) -> Iterator[Event]:
        """The run's server-sent events as they come: the history first, then live; ends when the stream does."""
        headers = {"Accept": "text/event-stream"}
        with self._open("GET", self._url(f"/v1/runs/{_segment(run_id)}/events"), headers=headers, timeout_s=max(self.timeout_s, 300.0)) as stream:
            for message in read_events(stream):
                data = json.loads(message.data)
                if message.event == "status":
                    yield StatusEvent(status=data["status"], cell=data.get("cell"), webrtc=data.get("webrtc"))
                elif message.event == "episode":
                    yield EpisodeEvent(episode=int(data["episode"]), of=int(data["of"]), outcome=data["outcome"], duration_s=float(data.get("duration_s") or 0))

    def watch(self, run_id: str, *, progress: Union[bool, TextIO] = True) -> Run:
        """Follows the run's events until it ends, printing a progress line (to stderr, or the stream
        given), and returns the finished run. Reconnects if the stream closes before the run ends."""
        out: Optional[TextIO] = None if progress is False else (sys.stderr if progress is True else progress)
        while True:
            seen: dict[int, str] = {}
            total = 0
            for event in self.events(run_id):
                if isinstance(event, EpisodeEvent):
                    seen[event.episode] = event.outcome
                    total = event.of
                    if out is not None:
                        out.write("\r" + progress_line(run_id, seen, total))
                        out.flush()
            run = self.run(run_id)
            if run.done:
                if out is not None:
                    rate = f"  n={run.result.n} rate {run.result.rate}" if run.result else ""
                    out.write(f"\r{progress_line(run_id, seen, total)}  {run.status}{rate}\n")
                    out.flush()
                return run

    # -- Episodes and downloads ------------------------------------------------------------------------

    def episodes(self, run_id: str, *, outcome: Optional[str] = None, cluster: Optional[str] = None) -> list[Episode]:
        return [Episode.from_json(e) for e in self._list(f"/v1/runs/{_segment(run_id)}/episodes", {"outcome": outcome, "cluster": cluster})]

    def artifacts(self, run_id: str, kind: str) -> list[Artifact]:
        """The run's stored files of one kind (``mcap``, ``video``, ``ground_truth``), each with bytes and sha256."""
        return [Artifact.from_json(a) for a in self._list(f"/v1/runs/{_segment(run_id)}/episodes", {"artifact": kind})]

    def download(self, url: str, path: PathLike, *, sha256: Optional[str] = None, size: Optional[int] = None) -> Path:
        """Downloads ``url`` (an artifact, export, paper or report URL; the key is sent) to ``path``. The file
        is checked against ``sha256`` (and ``size``) when given, else against the ``X-Content-SHA256`` the
        server sends; a mismatch removes it and raises ChecksumMismatch."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        digest = hashlib.sha256()
        written = 0
        with self._open("GET", self._url(url), headers={"Accept": "*/*"}) as answer, open(partial, "wb") as out:
            if sha256 is None:
                sha256 = answer.headers.get("X-Content-SHA256")
            while chunk := answer.read(CHUNK_BYTES):
                digest.update(chunk)
                out.write(chunk)
                written += len(chunk)
        actual = digest.hexdigest()
        if (sha256 is not None and actual != sha256.lower()) or (size is not None and written != size):
            partial.unlink(missing_ok=True)
            raise ChecksumMismatch(str(target), f"{sha256} ({size} bytes)" if size is not None else str(sha256), f"{actual} ({written} bytes)")
        partial.replace(target)
        return target

    def download_artifacts(self, run_id: str, kind: str, out_dir: PathLike, *, outcome: Optional[str] = None) -> list[Path]:
        """Downloads the run's ``kind`` files (of the episodes with ``outcome``, if given) into
        ``out_dir``, each checked against its sha256. Names: ``<index>_<episode_id>.<ext>``."""
        wanted = {e.id for e in self.episodes(run_id, outcome=outcome)} if outcome else None
        paths = []
        for artifact in self.artifacts(run_id, kind):
            if artifact.url is None or (wanted is not None and artifact.episode_id not in wanted):
                continue
            name = urllib.parse.urlparse(artifact.url).path.rsplit("/", 1)[-1]
            ext = name.rsplit(".", 1)[-1] if "." in name else kind
            paths.append(self.download(artifact.url, Path(out_dir) / f"{artifact.index:04d}_{artifact.episode_id}.{ext}", sha256=artifact.sha256, size=artifact.bytes))
        return paths

    # -- Exports and reports --------------------------------------------------------------------------

    def export(self, run_id: str, format: str) -> Export:
        """POST /v1/runs/{run_id}/export (``lerobot``, ``rlds`` or ``mcap-bundle``): 202, preparing."""
        return Export.from_json(self.request("POST", f"/v1/runs/{_segment(run_id)}/export", json_body={"format": format}))

    def get_export(self, export_id: str) -> Export:
        return Export.from_json(self.request("GET", f"/v1/exports/{_segment(export_id)}"))

    def wait_export(self, export_id: str, *, poll_s: float = 1.0, timeout_s: float = 1800.0) -> Export:
        """Polls until the export is no longer preparing; raises AssayError if it failed or expired."""
        deadline = time.monotonic() + timeout_s
        while True:
            current = self.get_export(export_id)
            if current.status == "ready":
                return current
            if current.status != "preparing":
                reason = (current.failure or {}).get("message") or (current.failure or {}).get("reason")
                raise AssayError(f"export {export_id} is {current.status}: {reason}")
            if time.monotonic() > deadline:
                raise AssayError(f"export {export_id} still preparing after {timeout_s:.0f} s ({current.episodes_done}/{current.episodes_total} episodes)")
            self._sleep(poll_s)

    def download_export(self, export: Export, out_dir: PathLike) -> Path:
        """Downloads a ready export's archive into ``out_dir``, checked against its sha256."""
        if export.download_url is None or export.file is None:
            raise AssayError(f"export {export.id} is {export.status}, not ready to download")
        return self.download(export.download_url, Path(out_dir) / export.file.name, sha256=export.file.sha256, size=export.file.bytes)

    def report(self, run_id: str) -> Report:
        return Report.from_json(self.request("GET", f"/v1/runs/{_segment(run_id)}/report"))

    def report_pdf(self, run_id: str, path: PathLike) -> Path:
        """Saves the run's PDF report to ``path`` (checked against the X-Content-SHA256 it comes with)."""
        return self.download(self._url(f"/v1/runs/{_segment(run_id)}/report", {"format": "pdf"}), path)

    def paper_file(self, runs: Union[str, Sequence[str]], file: str, path: PathLike) -> Path:
        """Saves a paper file to ``path``, checked against its X-Content-SHA256 (docs/papers.md): ``file`` is
        ``table.csv``, ``table.tex``, ``figure.svg``, ``figure.png``, ``citation.bib`` or ``citation.txt``.
        ``runs`` is one run id (a row per unit: GET /v1/runs/{id}/paper/{file}) or a list of ids (a row per
        run, in that order: GET /v1/paper/{file}?runs=a,b)."""
        if isinstance(runs, str):
            return self.download(f"/v1/runs/{_segment(runs)}/paper/{_segment(file)}", path)
        return self.download(self._url(f"/v1/paper/{_segment(file)}", {"runs": ",".join(runs)}), path)


def progress_line(run_id: str, outcomes: dict[int, str], total: int) -> str:
    """``run_x  12/20 episodes  10 ok  2 failed  rate 0.83``: what ``watch`` prints as it goes."""
    done = len(outcomes)
    ok = sum(1 for o in outcomes.values() if o == "success")
    rate = f"  rate {ok / done:.2f}" if done else ""
    return f"{run_id}  {done}/{total or '?'} episodes  {ok} ok  {done - ok} failed{rate}"


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _retry_after_s(value: Optional[str]) -> Optional[float]:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _error_of(answer: urllib.error.HTTPError) -> AssayError:
    retry_after = _retry_after_s(answer.headers.get("Retry-After"))
    raw = answer.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return AssayError.from_envelope(answer.code, body, retry_after)
    text = raw[:200].decode("utf-8", "replace")
    return AssayError(f"HTTP {answer.code} without the error envelope: {text!r}", status=answer.code, retry_after_s=retry_after)
