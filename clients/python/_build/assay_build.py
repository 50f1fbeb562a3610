"""The package's PEP 517 build backend: standard library only, so `pip install ./clients/python`
works offline and with `--no-build-isolation` on a bare Python 3.11.

Why not setuptools: the setuptools that ships with Python 3.11's venvs (65.x) needs the separate
`wheel` package to build a wheel, and an offline machine has neither it nor a newer setuptools to
fetch. The package is pure Python with no dependencies, so a wheel is a zip of src/assay plus its
metadata (the wheel format, PEP 427; metadata from pyproject.toml's [project] table, PEP 621).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src"
TAG = "py3-none-any"


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(project: dict) -> str:
    return project["name"].replace("-", "_")


def _metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    readme = ROOT / project.get("readme", "README.md")
    if readme.exists():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


def _package_files() -> list[Path]:
    return sorted(p for p in SOURCE.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    project = _project()
    dist_info = f"{_dist_name(project)}-{project['version']}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = _metadata(project).encode("utf-8")
    files[f"{dist_info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: assay_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()
    record = io.StringIO()
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    files[f"{dist_info}/RECORD"] = record.getvalue().encode()
    name = f"{_dist_name(project)}-{project['version']}-{TAG}.whl"
    with zipfile.ZipFile(Path(directory) / name, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return name


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings=None) -> list[str]:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _write_wheel(wheel_directory, {p.relative_to(SOURCE).as_posix(): p.read_bytes() for p in _package_files()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """`pip install -e`: a wheel whose .pth file puts src/ on sys.path."""
    return _write_wheel(wheel_directory, {f"{_dist_name(_project())}.pth": (str(SOURCE) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None) -> str:
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    name = f"{base}.tar.gz"
    members = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve(), *_package_files()]
    members += [p for p in (ROOT / "examples").rglob("*.py")] if (ROOT / "examples").exists() else []
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for path in members:
            if path.exists():
                sdist.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(project).encode("utf-8")
        info.size = len(data)
        sdist.addfile(info, io.BytesIO(data))
    return name
