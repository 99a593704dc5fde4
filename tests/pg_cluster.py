"""A throwaway PostgreSQL cluster for the tests that restart the server.

`initdb` and `pg_ctl` from the Debian packages (/usr/lib/postgresql/<version>/bin), a data
folder under the system's temporary folder, a free port on 127.0.0.1, trust authentication.
The machine's own server is never touched. initdb refuses to run as root: as root, the
commands run as the `postgres` user, who owns the folder.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

DEBIAN_BINARIES = Path("/usr/lib/postgresql")


def binaries() -> Path | None:
    """The newest installed server's bin folder, or None."""
    found = [p.parent for p in DEBIAN_BINARIES.glob("*/bin/initdb")]
    return max(found, key=lambda p: int(p.parent.name)) if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Cluster:
    bin: Path
    data: Path
    port: int
    as_user: list[str]  # the prefix that runs a command as the cluster's owner

    def pg_ctl(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data),
                               "-w", "-t", str(int(timeout)), *args],
                              capture_output=True, text=True, timeout=timeout + 30, check=False)

    @property
    def options(self) -> str:
        """The server's options: this port, its socket in the data folder, loopback only."""
        return (f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 "
                "-c fsync=off")

    def start(self) -> subprocess.CompletedProcess[str]:
        return self.pg_ctl("start", "-o", self.options, "-l", str(self.data / "server.log"))

    def running(self) -> bool:
        return self.pg_ctl("status").returncode == 0

    def restart(self) -> subprocess.CompletedProcess[str]:
        """Stop (fast: sessions are terminated, as `pg_ctlcluster restart` does) and start."""
        return self.pg_ctl("restart", "-m", "fast", "-l", str(self.data / "server.log"))

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def log(self) -> str:
        path = self.data / "server.log"
        return path.read_text(errors="replace")[-5000:] if path.exists() else ""


@contextmanager
def throwaway_cluster(database: str = "specledger") -> Iterator[Cluster]:
    """A running cluster with an empty `database`; stopped and deleted afterwards."""
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError(f"no PostgreSQL server binaries under {DEBIAN_BINARIES}")
    folder = Path(tempfile.mkdtemp(prefix="specledger-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    cluster = Cluster(bin_dir, folder / "data", free_port(), as_user)
    try:
        subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(cluster.data), "-A",
                        "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8",
                        "--no-sync"], capture_output=True, text=True, check=True, timeout=120)
        started = cluster.start()
        assert started.returncode == 0, f"{started.stderr}\n{cluster.log()}"
        with psycopg.connect(cluster.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            cluster.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(folder, ignore_errors=True)
