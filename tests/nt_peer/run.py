"""Run neural-tangents' own tests against ntkgap's shim on this interpreter's
stack (``make test-nt`` calls it once per lock).

It downloads the source distribution of the installed neural-tangents
version from the package index with pip (checked against its pinned
sha256), keeps its ``tests/`` and ``examples/`` under ``.cache/nt-peer/``
(a folder that ignores itself in git), and runs the test files that
``peer.toml`` marks ``run = true`` with the plugin ``plugin.py``, which
loads neural-tangents through the shim and deselects the tests
``peer.toml`` excludes on this JAX, each with its reason.

Usage: ``python tests/nt_peer/run.py [pytest args...]``: extra arguments
(``-k max_learning``, or test paths such as ``tests/predict_test.py``, which
replace the pinned files) go to pytest.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import pathlib
import subprocess
import sys
import tarfile
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / ".cache" / "nt-peer"
DIST = "neural-tangents"
# sha256 of each neural-tangents sdist the locks have used (PyPI's digest)
SDIST_SHA256 = {
    "0.6.5": "5565190e5b20c8578b2c8fbf1498ad9d8f6881c8c702e7af55189707a10843c3",
}
# what the runs need from the sdist: the tests and the examples they import
MEMBERS = ("tests/", "examples/")


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_sdist(version: str) -> pathlib.Path:
    """The neural-tangents sdist of ``version``, downloaded once into CACHE.

    Args:
        version: the installed neural-tangents version.

    Returns:
        Path of the verified ``.tar.gz``.

    Raises:
        SystemExit: no pinned digest for ``version``, or a mismatch.
    """
    if version not in SDIST_SHA256:
        raise SystemExit(f"tests/nt_peer/run.py: add the sha256 of {DIST} {version}'s sdist")
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE.parent / ".gitignore").write_text("*\n")
    found = sorted(CACHE.glob(f"neural[-_]tangents-{version}.tar.gz"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            + ["--no-binary", ":all:", "--disable-pip-version-check"]
            + [f"{DIST}=={version}", "-d", str(CACHE)],
            check=True,
        )
        found = sorted(CACHE.glob(f"neural[-_]tangents-{version}.tar.gz"))
    sdist = found[0]
    if _sha256(sdist) != SDIST_SHA256[version]:
        sdist.unlink()
        raise SystemExit(f"{sdist.name}: sha256 differs from the pinned one; removed")
    return sdist


def unpack(sdist: pathlib.Path, version: str) -> pathlib.Path:
    """Extract the sdist's tests and examples (not its library: the
    installed one is under test) once.

    Args:
        sdist: the verified source distribution.
        version: its version.

    Returns:
        The folder to run pytest in (it holds ``tests/`` and ``examples/``).
    """
    dest = CACHE / f"src-{version}"
    done = dest / ".unpacked"
    if done.exists():
        return dest
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = []
        for m in tar.getmembers():
            rel = m.name[len(top) + 1 :]
            if rel.startswith(MEMBERS) and (m.isfile() or m.isdir()):
                m.name = rel
                members.append(m)
        tar.extractall(dest, members=members, filter="data")
    done.touch()
    return dest


def pinned_files() -> list[str]:
    """Test files of the sdist that ``peer.toml`` marks to run.

    Returns:
        Their paths relative to the sdist root.
    """
    table = tomllib.loads((HERE / "peer.toml").read_text())
    return [f["path"] for f in table["file"] if f.get("run")]


def check_every_file_listed(src: pathlib.Path) -> None:
    """Every ``*_test.py`` the sdist ships is in ``peer.toml``, run or
    with the reason it is not, so no part of the suite is skipped silently.

    Args:
        src: the unpacked sdist folder.

    Raises:
        SystemExit: naming the files ``peer.toml`` does not list.
    """
    table = tomllib.loads((HERE / "peer.toml").read_text())
    listed = {f["path"] for f in table["file"]}
    for f in table["file"]:
        if not f.get("run") and not f.get("reason"):
            raise SystemExit(f"peer.toml: {f['path']} is neither run nor given a reason")
    shipped = {str(p.relative_to(src)) for p in (src / "tests").rglob("*_test.py")}
    if shipped - listed:
        raise SystemExit(f"peer.toml does not list: {sorted(shipped - listed)}")


def main(argv: list[str]) -> int:
    """Fetch, unpack and run the pinned peer tests on this stack.

    Args:
        argv: extra pytest arguments.

    Returns:
        pytest's exit status.
    """
    version = importlib.metadata.version(DIST)
    src = unpack(fetch_sdist(version), version)
    check_every_file_listed(src)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), str(src)]))
    cmd = [sys.executable, "-m", "pytest", "-p", "plugin", "-p", "no:cacheprovider"]
    cmd += ["-c", str(HERE / "pytest.ini"), "--rootdir", str(src), "--confcutdir", str(src)]
    paths = [a for a in argv if a.startswith("tests/")]
    cmd += ["-q", "--durations=5", *argv, *([] if paths else pinned_files())]
    return subprocess.run(cmd, cwd=src, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
