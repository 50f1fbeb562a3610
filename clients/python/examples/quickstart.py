#!/usr/bin/env python3
"""The README's quick start with the Python client: robots, a run of the expert reference policy,
its live progress, the result with n and its interval, the failed episodes' videos (sha256
checked), the PDF report and a LeRobot export.

    export ASSAY_API_KEY=asy_live_...          # the admin key `npm start` printed
    export ASSAY_BASE_URL=http://127.0.0.1:8080
    python3 examples/quickstart.py [--episodes 20] [--out quickstart-out]

Exit status: 0 when the run completed, 1 when it failed or was stopped, 3 on an API error.
"""
from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

from assay import AssayError, Client

POLICY = {
    "type": "container",
    "image": "assay/ref-policy:expert",
    "action_space": {"type": "joint_position", "dim": 6},
    "observation_contract": {"cameras": ["top", "wrist"], "state": ["joint_positions"]},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--image", default=POLICY["image"], help="policy image (try assay/ref-policy:novice)")
    parser.add_argument("--seed", type=int, default=None, help="perturbation seed, for a repeatable run")
    parser.add_argument("--out", default="quickstart-out", help="where videos, the report and the export go")
    args = parser.parse_args()
    out = Path(args.out)
    client = Client()  # ASSAY_API_KEY and ASSAY_BASE_URL

    robots = client.robots()
    print("robots:", ", ".join(f"{r['id']} (firmware {', '.join(r.get('firmwares', []))})" for r in robots))

    body = {
        "kind": "run", "robot": "so101@latest", "environment": "tabletop@1", "task": "pick-cube@v1",
        "episodes": args.episodes, "policy": {**POLICY, "image": args.image},
    }
    if args.seed is not None:
        body["perturbation"] = {"seed": args.seed}
    run = client.submit(body, idempotency_key=f"quickstart-{uuid.uuid4()}")
    print(f"submitted {run.id}: {run.status}, pins {run.resolved_pins.get('robot')} {run.resolved_pins.get('task')}")

    run = client.watch(run.id)  # a progress line on stderr until the run ends
    if run.status != "completed" or run.result is None:
        detail = run.status_detail or {}
        print(f"run {run.id} {run.status}: {detail.get('code')} {detail.get('message')}", file=sys.stderr)
        return 1
    result = run.result
    print(f"result: n={result.n} success_rate={result.success_rate:.2f} ci95=[{result.ci95[0]:.2f}, {result.ci95[1]:.2f}] interval_method={result.interval_method}")
    if result.cells:
        print("cells:", ", ".join(f"{c.cell} {c.successes}/{c.n}" for c in result.cells.by_cell))
        for sentence in result.cells.statement:
            print(" ", sentence)
    if result.failure_clusters:
        print("failure clusters:", result.failure_clusters)

    failures = client.episodes(run.id, outcome="failure")
    print(f"episodes: {len(client.episodes(run.id))}, failures: {len(failures)}")
    videos = client.download_artifacts(run.id, "video", out / "videos", outcome="failure")
    print(f"downloaded {len(videos)} failure videos (sha256 checked) to {out / 'videos'}")

    report = client.report(run.id)
    print("citation:", report.citation)
    pdf = client.report_pdf(run.id, out / "report.pdf")
    print(f"report: {pdf}")

    export = client.export(run.id, "lerobot")
    export = client.wait_export(export.id)
    archive = client.download_export(export, out / "exports")
    print(f"export: {archive} ({export.file.bytes if export.file else 0} bytes, sha256 checked; {export.raw['episodes']['included']} episodes)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssayError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(3)
