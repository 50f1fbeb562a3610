"""The Python client against a real coordinator with a simulated cell.

Started by test/integration/python-client.spec.ts, which sets ASSAY_BASE_URL, ASSAY_API_KEY and
PYTHONPATH (src/), and runs `python3 -m unittest discover -s clients/python/tests`. The
coordinator's anonymous rate limit is 1/s with a burst of 2 so that a 429 can be provoked.
"""
from __future__ import annotations

import ast
import hashlib
import http.server
import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from assay import AssayError, ChecksumMismatch, Client, EpisodeEvent, Run, StatusEvent  # noqa: F401 (Run: annotations)

HERE = Path(__file__).resolve().parent
POLICY = {
    "type": "container",
    "action_space": {"type": "joint_position", "dim": 6},
    "observation_contract": {"cameras": ["top", "wrist"], "state": ["joint_positions"]},
}


def completed_compare(client: Client) -> "Run":
    """RunTest's paired compare of expert and novice, 2 pairs (the same one for every test), once it has ended."""
    run = client.compare(
        {"expert": {**POLICY, "image": "assay/ref-policy:expert"}, "novice": {**POLICY, "image": "assay/ref-policy:novice"}},
        robot="so101@latest", environment="tabletop@1", task="pick-cube@v1", episodes=2, paired=True, perturbation={"seed": 5},
        idempotency_key="python-client-compare-1",
    )
    return client.watch(run.id, progress=False)


def run_body(episodes: int, image: str = "assay/ref-policy:novice", seed: int = 3) -> dict:
    return {
        "kind": "run", "robot": "so101@latest", "environment": "tabletop@1", "task": "pick-cube@v1",
        "episodes": episodes, "policy": {**POLICY, "image": image}, "perturbation": {"seed": seed},
    }


class ErrorsTest(unittest.TestCase):
    def test_a_bad_key_raises_the_envelope(self) -> None:
        client = Client(api_key="asy_live_" + "x" * 40)
        with self.assertRaises(AssayError) as caught:
            client.runs()
        error = caught.exception
        self.assertEqual(error.status, 401)
        self.assertEqual(error.code, "invalid_api_key")
        self.assertTrue(error.doc_url and error.doc_url.endswith("/docs/errors#invalid_api_key"), error.doc_url)
        self.assertEqual(error.envelope["error"]["code"], "invalid_api_key")
        self.assertIn("invalid_api_key", str(error))

    def test_a_bad_request_says_what_to_fix(self) -> None:
        with self.assertRaises(AssayError) as caught:
            Client().submit(run_body(episodes="auto(ci=2)"))  # type: ignore[arg-type]
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.code, "episodes_invalid")
        self.assertIn("auto(ci=2)", caught.exception.message)

    def test_an_unknown_run_is_not_found(self) -> None:
        with self.assertRaises(AssayError) as caught:
            Client().run("run_doesNotExist")
        self.assertEqual(caught.exception.code, "not_found")
        self.assertEqual(caught.exception.status, 404)

    def test_429_is_retried_after_retry_after(self) -> None:
        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            time.sleep(seconds)

        client = Client(sleep=sleep)
        docs = [client.openapi() for _ in range(4)]  # burst 2, then 1/s: at least one 429 on the way
        self.assertTrue(all(doc["openapi"] == "3.1.0" for doc in docs))
        self.assertGreaterEqual(len(waits), 1)
        self.assertTrue(all(w >= 1 for w in waits), waits)

        impatient = Client(max_retries=0)
        with self.assertRaises(AssayError) as caught:
            for _ in range(4):
                impatient.openapi()
        self.assertEqual(caught.exception.code, "rate_limited")
        self.assertEqual(caught.exception.status, 429)
        self.assertGreaterEqual(caught.exception.retry_after_s or 0, 1)


class RunTest(unittest.TestCase):
    def test_submit_watch_episodes_downloads_report_export(self) -> None:
        client = Client()
        run = client.submit(run_body(4), idempotency_key="python-client-run-1")
        self.assertEqual(client.submit(run_body(4), idempotency_key="python-client-run-1").id, run.id)
        self.assertIn(run.status, ("queued", "scheduling", "running"))
        line = io.StringIO()
        done = client.watch(run.id, progress=line)
        self.assertEqual(done.status, "completed")
        self.assertIn(f"{run.id}  4/4 episodes", line.getvalue())
        self.assertIn("completed", line.getvalue())
        result = done.result
        assert result is not None
        self.assertEqual(result.n, 4)
        lo, hi = result.ci95
        self.assertTrue(0 <= lo <= result.success_rate <= hi <= 1, result.ci95)
        self.assertEqual(result.interval_method, "beta-binomial-posterior")
        assert result.cells is not None
        self.assertEqual(sum(c.n for c in result.cells.by_cell), 4)

        events = list(client.events(run.id))
        self.assertIsInstance(events[0], StatusEvent)
        self.assertEqual([e.episode for e in events if isinstance(e, EpisodeEvent)], [1, 2, 3, 4])

        episodes = client.episodes(run.id)
        self.assertEqual(sorted(e.index for e in episodes), [0, 1, 2, 3])
        self.assertEqual(len(client.episodes(run.id, outcome="failure")), sum(1 for e in episodes if e.outcome == "failure"))
        with tempfile.TemporaryDirectory() as out:
            mcaps = client.download_artifacts(run.id, "mcap", out)
            self.assertEqual(len(mcaps), 4)
            self.assertTrue(all(p.read_bytes()[:8] == b"\x89MCAP0\r\n" for p in mcaps))
            artifact = client.artifacts(run.id, "mcap")[0]
            bad = Path(out) / "bad.mcap"
            with self.assertRaises(ChecksumMismatch):
                client.download(artifact.url or "", bad, sha256="0" * 64)
            self.assertFalse(bad.exists())
            self.assertFalse(Path(str(bad) + ".part").exists())

            report = client.report(run.id)
            self.assertEqual(report.run_id, run.id)
            self.assertEqual(report.result.n, 4)
            self.assertIn(run.id, report.citation)
            self.assertEqual(client.report_pdf(run.id, Path(out) / "r.pdf").read_bytes()[:5], b"%PDF-")

            export = client.wait_export(client.export(run.id, "mcap-bundle").id, poll_s=0.2)
            self.assertEqual(export.status, "ready")
            archive = client.download_export(export, out)
            assert export.file is not None
            self.assertEqual(archive.stat().st_size, export.file.bytes)

    def test_compare_gives_the_difference_with_its_interval(self) -> None:
        client = Client()
        done = completed_compare(client)
        self.assertEqual(done.status, "completed")
        assert done.result is not None and done.result.comparison is not None
        comparison = done.result.comparison
        self.assertEqual((comparison.a, comparison.b, comparison.paired), ("expert", "novice", True))
        lo, hi = comparison.ci
        self.assertTrue(-1 <= lo <= comparison.diff <= hi <= 1, (comparison.diff, comparison.ci))
        self.assertEqual([u.policy_name for u in done.result.units], ["expert", "novice"])
        self.assertTrue(all(u.result.n == 2 for u in done.result.units))


    def test_compare_runs_and_paper_files_with_their_checksums(self) -> None:
        client = Client()
        # A run of one episode of its own (test_submit_... checks its run is fresh), and the compare of the test above.
        plain = client.watch(client.submit(run_body(1), idempotency_key="python-client-paper-1").id, progress=False)
        paired = completed_compare(client)
        self.assertEqual((plain.status, paired.status), ("completed", "completed"))
        # The plain run is one side; the compare's policies are one side each.
        c = client.compare_runs([plain.id, paired.id])
        self.assertEqual(c.runs, [plain.id, paired.id])
        self.assertEqual([(s.run_id, s.unit) for s in c.sides], [(plain.id, None), (paired.id, "policy:expert"), (paired.id, "policy:novice")])
        self.assertEqual([s.n for s in c.sides], [1, 2, 2])
        self.assertEqual(len(c.differences), 3)
        for d in c.differences:
            lo, hi = d.ci
            self.assertTrue(-1 <= lo <= d.diff <= hi <= 1, (d.diff, d.ci))
            self.assertIn(d.shown, ("a_higher", "b_higher", "none"))
            self.assertTrue(d.sentence)
        # Three pairs: each interval at 1 - 0.05/3, so that all three hold together at 95% (Bonferroni).
        self.assertAlmostEqual(c.differences[0].ci_level, 1 - 0.05 / 3, places=3)
        with self.assertRaises(AssayError) as caught:
            client.compare_runs([plain.id])
        self.assertEqual(caught.exception.code, "contract_validation_failed")

        with tempfile.TemporaryDirectory() as out:
            csv = client.paper_file(plain.id, "table.csv", Path(out) / "run.csv").read_bytes().decode("utf-8")
            rows = csv.strip().split("\r\n")
            self.assertEqual(rows[0].split(",")[:3], ["run_id", "unit", "kind"])
            self.assertEqual([r.split(",")[0] for r in rows[1:]], [plain.id])
            tex = client.paper_file([paired.id, plain.id], "table.tex", Path(out) / "two.tex").read_text()
            self.assertIn("\\toprule", tex)
            self.assertEqual(tex.count("\\\\\n"), 3, tex)  # the header row and a row per run
            png = client.paper_file([paired.id, plain.id], "figure.png", Path(out) / "two.png").read_bytes()
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            cite = client.paper_file(paired.id, "citation.txt", Path(out) / "cite.txt").read_text()
            self.assertEqual(cite.strip(), client.report(paired.id).citation)
            self.assertTrue(cite.startswith(f"Assay comparison {paired.id} ("), cite)


class ChecksumTest(unittest.TestCase):
    def test_a_download_whose_bytes_differ_from_its_x_content_sha256_is_refused(self) -> None:
        body = b"the bytes the server sends"

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                lie = self.path.endswith("/wrong")
                self.send_header("X-Content-SHA256", hashlib.sha256(b"other bytes" if lie else body).hexdigest())
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            client = Client(api_key="asy_live_test", base_url=f"http://127.0.0.1:{server.server_address[1]}")
            with tempfile.TemporaryDirectory() as out:
                self.assertEqual(client.download("/v1/paper/right", Path(out) / "right.csv").read_bytes(), body)
                wrong = Path(out) / "wrong.csv"
                with self.assertRaises(ChecksumMismatch):
                    client.download("/v1/paper/wrong", wrong)
                self.assertFalse(wrong.exists())
                self.assertFalse(Path(str(wrong) + ".part").exists())
        finally:
            server.shutdown()
            server.server_close()


class NamedRunsTest(unittest.TestCase):
    def test_names_metadata_and_the_runs_list_filters(self) -> None:
        client = Client()
        study = f"py-{time.time_ns()}"
        run = client.submit(run_body(2), name="python named", metadata={"study": study, "arm": "novice"})
        client.cancel(run.id)  # only its labels matter here
        self.assertEqual(run.name, "python named")
        self.assertEqual(run.metadata, {"study": study, "arm": "novice"})
        self.assertEqual(run.policy_name, "assay/ref-policy:novice")
        self.assertEqual(run.policy_names, ["assay/ref-policy:novice"])

        found = client.runs(metadata={"study": study}, policy_name="assay/ref-policy:novice", task="pick-cube", robot="so101", kind="run")
        self.assertEqual([r.id for r in found], [run.id])
        self.assertEqual(client.runs(metadata={"study": study, "arm": "expert"}), [])

        updated = client.update_run(run.id, name=None, metadata={"arm": "", "reviewed": "yes"})
        self.assertIsNone(updated.name)
        self.assertEqual(updated.metadata, {"study": study, "reviewed": "yes"})
        self.assertEqual([r.id for r in client.runs(metadata={"reviewed": "yes", "study": study})], [run.id])
        with self.assertRaises(AssayError) as caught:
            client.update_run(run.id, metadata={"a[b]": "x"})
        self.assertEqual(caught.exception.code, "contract_validation_failed")
        self.assertIn("square bracket", caught.exception.message)


class QuickstartTest(unittest.TestCase):
    def test_the_client_readme_examples_are_python_that_calls_what_the_client_has(self) -> None:
        readme = (HERE.parent / "README.md").read_text()
        blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
        self.assertGreaterEqual(len(blocks), 2)
        for block in blocks:
            tree = ast.parse(block)
            called = {node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and isinstance(node.func.value, ast.Name) and node.func.value.id == "client"}
            self.assertTrue(called, block)
            self.assertEqual([name for name in sorted(called) if not callable(getattr(Client, name, None))], [], block)

    def test_the_readme_quick_start_runs_as_a_script(self) -> None:
        with tempfile.TemporaryDirectory() as out:
            script = HERE.parent / "examples" / "quickstart.py"
            done = subprocess.run(
                [sys.executable, str(script), "--episodes", "3", "--seed", "2", "--out", out],
                capture_output=True, text=True, timeout=600, env=os.environ.copy(),
            )
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            self.assertIn("result: n=3 ", done.stdout)
            self.assertIn("interval_method=beta-binomial-posterior", done.stdout)
            self.assertIn("3/3 episodes", done.stderr)
            self.assertTrue((Path(out) / "report.pdf").read_bytes().startswith(b"%PDF-"))
            self.assertEqual(len(list((Path(out) / "exports").iterdir())), 1)


if __name__ == "__main__":
    unittest.main()
