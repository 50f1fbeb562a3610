"""Typed views of the API's JSON (docs/api.md; the OpenAPI document at /v1/openapi.json).

Each dataclass names the fields a script reads most, with the spec's names, and keeps the whole
object in ``raw``: kinds and later API versions add fields, and nothing the API sends is lost.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Json = dict[str, Any]
Interval = tuple[float, float]


def _interval(value: Any) -> Interval:
    lower, upper = value
    return (float(lower), float(upper))


@dataclass(frozen=True)
class RateSummary:
    """A success rate with its episode count and 95% interval; a bare percentage is never returned."""

    n: int
    success_rate: float
    ci95: Interval
    interval_method: str

    @classmethod
    def from_json(cls, obj: Json) -> "RateSummary":
        return cls(n=int(obj["n"]), success_rate=float(obj["success_rate"]), ci95=_interval(obj["ci95"]), interval_method=str(obj["interval_method"]))

    def __str__(self) -> str:
        lo, hi = self.ci95
        return f"{self.success_rate:.2f} [{lo:.2f}, {hi:.2f}] (n={self.n}, {self.interval_method})"


@dataclass(frozen=True)
class CellCount:
    cell: str
    n: int
    successes: int
    success_rate: float


@dataclass(frozen=True)
class Cells:
    """The episodes behind a rate per physical cell, and the claims about them."""

    by_cell: list[CellCount]
    clusters: int
    effective_n: float
    design_effect: float
    these_cells: Optional[RateSummary]
    statement: list[str]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Cells":
        these = obj.get("these_cells")
        return cls(
            by_cell=[CellCount(cell=c["cell"], n=int(c["n"]), successes=int(c["successes"]), success_rate=float(c["success_rate"])) for c in obj.get("by_cell", [])],
            clusters=int(obj.get("clusters", 0)),
            effective_n=float(obj.get("effective_n", 0)),
            design_effect=float(obj.get("design_effect", 1)),
            these_cells=RateSummary.from_json({"n": sum(int(c["n"]) for c in obj.get("by_cell", [])), **these}) if these else None,
            statement=list(obj.get("statement", [])),
            raw=obj,
        )


@dataclass(frozen=True)
class Comparison:
    """A compare (or transfer) run's difference between its two arms, a - b."""

    a: Optional[str]
    b: Optional[str]
    paired: bool
    diff: float
    ci: Interval
    ci_level: float
    method: str
    statement: Optional[str]
    mcnemar_p_value: Optional[float]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Comparison":
        statement = obj.get("statement")
        return cls(
            a=obj.get("a"),
            b=obj.get("b"),
            paired=bool(obj.get("paired", False)),
            diff=float(obj["diff"]),
            ci=_interval(obj["ci"]),
            ci_level=float(obj.get("ci_level", 0.95)),
            method=str(obj.get("method", "")),
            statement=" ".join(statement) if isinstance(statement, list) else statement,
            mcnemar_p_value=(obj.get("mcnemar") or {}).get("p_value"),
            raw=obj,
        )


@dataclass(frozen=True)
class UnitResult:
    """One unit of a multi-unit run (a compare's policy, a matrix cell, an eval's task)."""

    key: str
    robot: str
    environment: str
    task: str
    policy_name: Optional[str]
    role: Optional[str]
    result: "Result"

    @classmethod
    def from_json(cls, obj: Json) -> "UnitResult":
        return cls(
            key=obj["key"], robot=obj["robot"], environment=obj["environment"], task=obj["task"],
            policy_name=obj.get("policy_name"), role=obj.get("role"), result=Result.from_json(obj["result"]),
        )


@dataclass(frozen=True)
class Result:
    """A completed run's result: n, the rate and its interval, meters, cost and artifact links."""

    n: int
    success_rate: float
    ci95: Interval
    interval_method: str
    failure_clusters: dict[str, int]
    robot_hours: float
    environment_hours: float
    cost_usd: float
    stages: dict[str, RateSummary]
    cells: Optional[Cells]
    units: list[UnitResult]
    comparison: Optional[Comparison]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Result":
        return cls(
            n=int(obj["n"]),
            success_rate=float(obj["success_rate"]),
            ci95=_interval(obj["ci95"]),
            interval_method=str(obj["interval_method"]),
            failure_clusters={k: int(v) for k, v in (obj.get("failure_clusters") or {}).items()},
            robot_hours=float(obj.get("robot_hours", 0)),
            environment_hours=float(obj.get("environment_hours", 0)),
            cost_usd=float(obj.get("cost_usd", 0)),
            stages={k: RateSummary.from_json(v) for k, v in (obj.get("stages") or {}).items()},
            cells=Cells.from_json(obj["cells"]) if obj.get("cells") else None,
            units=[UnitResult.from_json(u) for u in obj.get("units") or [] if isinstance(u, dict) and "result" in u],
            comparison=Comparison.from_json(obj["comparison"]) if isinstance(obj.get("comparison"), dict) and "diff" in obj["comparison"] else None,
            raw=obj,
        )

    @property
    def rate(self) -> RateSummary:
        return RateSummary(self.n, self.success_rate, self.ci95, self.interval_method)


TERMINAL_STATUSES = frozenset({"completed", "failed", "stopped"})


@dataclass(frozen=True)
class Run:
    id: str
    kind: str
    status: str
    created: str
    completed: Optional[str]
    robot: Optional[str]
    environment: Optional[str]
    task: Optional[str]
    resolved_pins: Json
    result: Optional[Result]
    status_detail: Optional[Json]
    raw: Json = field(repr=False)
    #: The run's name (None: none) and metadata as they are now.
    name: Optional[str] = None
    metadata: dict[str, str] = field(default_factory=dict)
    #: The name its policy is shown under (kinds with one policy; a compare's are in ``policy_names``).
    policy_name: Optional[str] = None

    @classmethod
    def from_json(cls, obj: Json) -> "Run":
        return cls(
            id=obj["id"], kind=obj["kind"], status=obj["status"], created=obj["created"], completed=obj.get("completed"),
            robot=obj.get("robot"), environment=obj.get("environment"), task=obj.get("task"),
            resolved_pins=obj.get("resolved_pins") or {}, result=Result.from_json(obj["result"]) if obj.get("result") else None,
            status_detail=obj.get("status_detail"), raw=obj,
            name=obj.get("name"), metadata=dict(obj.get("metadata") or {}), policy_name=obj.get("policy_name"),
        )

    @property
    def policy_names(self) -> list[str]:
        """Every policy's shown name: ``[policy_name]``, or a compare's names in order."""
        if self.policy_name:
            return [self.policy_name]
        return [u["policy_name"] for u in self.raw.get("units", []) if u.get("policy_name")]

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True)
class Episode:
    id: str
    index: int
    outcome: str
    duration_s: Optional[float]
    video_url: Optional[str]
    mcap_url: Optional[str]
    replay_spec: Optional[Json]
    failure_cluster: Optional[str]
    cell: Optional[str]
    unit: Optional[int]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Episode":
        return cls(
            id=obj["id"], index=int(obj["index"]), outcome=obj["outcome"], duration_s=obj.get("duration_s"),
            video_url=obj.get("video_url"), mcap_url=obj.get("mcap_url"), replay_spec=obj.get("replay_spec"),
            failure_cluster=obj.get("failure_cluster"), cell=obj.get("cell"), unit=obj.get("unit"), raw=obj,
        )


@dataclass(frozen=True)
class Artifact:
    """One stored file of an episode (GET /v1/runs/{run_id}/episodes?artifact=<kind>), with its sha256."""

    episode_id: str
    index: int
    kind: str
    url: Optional[str]
    bytes: int
    sha256: str
    status: str

    @classmethod
    def from_json(cls, obj: Json) -> "Artifact":
        return cls(episode_id=obj["episode_id"], index=int(obj["index"]), kind=obj["kind"], url=obj.get("url"), bytes=int(obj["bytes"]), sha256=obj["sha256"], status=obj["status"])


@dataclass(frozen=True)
class ArchiveFile:
    name: str
    bytes: int
    sha256: str
    content_type: str


@dataclass(frozen=True)
class Export:
    id: str
    run_id: str
    format: str
    status: str
    download_url: Optional[str]
    episodes_done: int
    episodes_total: int
    file: Optional[ArchiveFile]
    failure: Optional[Json]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Export":
        f = obj.get("file")
        progress = obj.get("progress") or {}
        return cls(
            id=obj["id"], run_id=obj["run_id"], format=obj["format"], status=obj["status"], download_url=obj.get("download_url"),
            episodes_done=int(progress.get("episodes_done", 0)), episodes_total=int(progress.get("episodes_total", 0)),
            file=ArchiveFile(name=f["name"], bytes=int(f["bytes"]), sha256=f["sha256"], content_type=f["content_type"]) if f else None,
            failure=obj.get("failure"), raw=obj,
        )


@dataclass(frozen=True)
class Report:
    """A run's verification report (JSON); its PDF is ``Client.report_pdf``."""

    run_id: str
    run_kind: str
    result: RateSummary
    resolved_pins: Json
    citation: str
    pdf_url: str
    failure_clusters: dict[str, int]
    stages: dict[str, RateSummary]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "Report":
        return cls(
            run_id=obj["run_id"], run_kind=obj.get("run_kind", "run"), result=RateSummary.from_json(obj["result"]),
            resolved_pins=obj.get("resolved_pins") or {}, citation=obj["citation"], pdf_url=obj["pdf_url"],
            failure_clusters={k: int(v) for k, v in (obj.get("failure_clusters") or {}).items()},
            stages={k: RateSummary.from_json(v) for k, v in (obj.get("stages") or {}).items()}, raw=obj,
        )


@dataclass(frozen=True)
class ComparisonSide:
    """One side of a comparison of runs: a run (or one unit of a compare, transfer or matrix run) with its rate."""

    run_id: str
    unit: Optional[str]
    label: str
    policy_name: Optional[str]
    robot: str
    environment: str
    task: str
    n: int
    successes: int
    success_rate: float
    ci95: Interval
    wilson95: Interval
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "ComparisonSide":
        return cls(
            run_id=obj["run_id"], unit=obj.get("unit"), label=obj["label"], policy_name=obj.get("policy_name"),
            robot=obj["robot"], environment=obj["environment"], task=obj["task"], n=int(obj["n"]), successes=int(obj["successes"]),
            success_rate=float(obj["success_rate"]), ci95=_interval(obj["ci95"]), wilson95=_interval(obj["wilson95"]), raw=obj,
        )


@dataclass(frozen=True)
class SidesDifference:
    """The difference a - b of two sides' success rates, with its interval and the claim it supports in one sentence."""

    a: str
    b: str
    diff: float
    ci: Interval
    ci_level: float
    method: str
    shown: str
    sentence: str
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "SidesDifference":
        return cls(
            a=obj["a"], b=obj["b"], diff=float(obj["diff"]), ci=_interval(obj["ci"]), ci_level=float(obj["ci_level"]),
            method=str(obj["method"]), shown=str(obj["shown"]), sentence=str(obj["sentence"]), raw=obj,
        )


@dataclass(frozen=True)
class RunComparison:
    """Two or more completed runs side by side (``GET /v1/comparisons``): every pair's difference, each
    side's rate, and a warning per pin on which they differ."""

    runs: list[str]
    sides: list[ComparisonSide]
    differences: list[SidesDifference]
    warnings: list[str]
    lines: list[str]
    raw: Json = field(repr=False)

    @classmethod
    def from_json(cls, obj: Json) -> "RunComparison":
        return cls(
            runs=list(obj["runs"]), sides=[ComparisonSide.from_json(s) for s in obj["sides"]],
            differences=[SidesDifference.from_json(d) for d in obj["differences"]],
            warnings=list(obj.get("warnings") or []), lines=list(obj.get("lines") or []), raw=obj,
        )


@dataclass(frozen=True)
class StatusEvent:
    """SSE ``status``: the run's status and the cell it runs on."""

    status: str
    cell: Optional[str]
    webrtc: Optional[str]


@dataclass(frozen=True)
class EpisodeEvent:
    """SSE ``episode``: episode ``episode`` of ``of`` (counted from 1) ended with ``outcome``."""

    episode: int
    of: int
    outcome: str
    duration_s: float
