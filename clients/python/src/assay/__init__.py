"""Assay: physical robot evaluation as a service. A client of its /v1 API, standard library only.

    from assay import Client
    client = Client(api_key="asy_live_...", base_url="http://127.0.0.1:8080")
    run = client.submit({...})
    run = client.watch(run.id)
    print(run.result.n, run.result.success_rate, run.result.ci95)
"""
__version__ = "0.5.0"

from .client import Client, progress_line
from .errors import AssayError, ChecksumMismatch
from .models import (
    ArchiveFile, Artifact, CellCount, Cells, Comparison, ComparisonSide, Episode, EpisodeEvent, Export, RateSummary, Report,
    Result, Run, RunComparison, SidesDifference, StatusEvent, UnitResult,
)

__all__ = [
    "Client", "AssayError", "ChecksumMismatch", "ArchiveFile", "Artifact", "CellCount", "Cells", "Comparison", "ComparisonSide",
    "Episode", "EpisodeEvent", "Export", "RateSummary", "Report", "Result", "Run", "RunComparison", "SidesDifference",
    "StatusEvent", "UnitResult", "progress_line",
]
