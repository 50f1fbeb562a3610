"""Errors raised by the client.

Every non-2xx answer of the API has one shape, the error envelope
``{"error": {"code", "message", "doc_url", "run_id"?}}`` (docs/errors.md); :class:`AssayError`
carries it whole. The codes form a fixed list; ``code`` is ``None`` only when no envelope came back
(the service was unreachable, or something in between answered instead).
"""
from __future__ import annotations

from typing import Any, Optional


class AssayError(Exception):
    """An error answer of the Assay API, or a failure to reach it."""

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        status: Optional[int] = None,
        doc_url: Optional[str] = None,
        run_id: Optional[str] = None,
        retry_after_s: Optional[float] = None,
        envelope: Optional[dict[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.doc_url = doc_url
        self.run_id = run_id
        self.retry_after_s = retry_after_s
        self.envelope = envelope

    def __str__(self) -> str:
        where = f" (see {self.doc_url})" if self.doc_url else ""
        what = f"{self.code}: " if self.code else ""
        return f"{what}{self.message}{where}"

    @classmethod
    def from_envelope(cls, status: int, body: dict[str, Any], retry_after_s: Optional[float]) -> "AssayError":
        err = body["error"]
        return cls(
            str(err.get("message", "")),
            code=err.get("code"),
            status=status,
            doc_url=err.get("doc_url"),
            run_id=err.get("run_id"),
            retry_after_s=retry_after_s,
            envelope=body,
        )


class ChecksumMismatch(AssayError):
    """A downloaded file's sha256 (or size) is not the one the API announced; the file was removed."""

    def __init__(self, path: str, expected: str, actual: str) -> None:
        super().__init__(f"{path}: sha256 {actual} does not match the announced {expected}; the partial file was removed")
        self.path = path
        self.expected = expected
        self.actual = actual
