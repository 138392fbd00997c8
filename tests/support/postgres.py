"""A real PostgreSQL server in a temporary folder, for tests and benchmarks.

`initdb` refuses to run as root, so when the suite runs as root (CI) the server
runs as the ``postgres`` system user through ``runuser`` and its folder is
handed to that user. It listens on 127.0.0.1 on a free port (and on a socket in
its own folder), logs every statement with its parameters (so a test can prove a
secret never reached the server's log), and is stopped at the end.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

SUPERUSER = "engram_admin"
PASSWORD = "admin-test-pw"


def pg_bin_dir() -> Path | None:
    """The newest installed PostgreSQL bin folder (Debian layout), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """initdb + pg_ctl in a temp folder; `url()` builds connection strings for any role."""

    def __init__(self, bin_dir: Path | None = None, *, log_statements: bool = True) -> None:
        found = bin_dir or pg_bin_dir()
        if found is None:
            raise RuntimeError("PostgreSQL is not installed (scripts/bootstrap.sh installs it)")
        self.bin = found
        self.root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        self.log_statements = log_statements  # tests prove secrets stay out of the log; benchmarks skip it
        self._init()

    def _cmd(self, *args: str) -> list[str]:
        # Run as the postgres system user when we are root (initdb refuses root).
        return ["runuser", "-u", "postgres", "--", *args] if self.as_root else list(args)

    def _init(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        subprocess.run(self._cmd(str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                                 "--pwfile", str(pwfile), "--auth", "scram-sha-256", "-E", "UTF8",
                                 "--no-sync", "--locale", "C"),
                       check=True, capture_output=True)
        pwfile.unlink()
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                       f"unix_socket_directories = '{self.root}'\n"
                       "fsync = off\nfull_page_writes = off\n"  # tests: speed over crash safety of the OS
                       "max_connections = 60\nshared_buffers = 32MB\n"
                       + ("log_statement = 'all'\nlog_parameter_max_length = -1\n" if self.log_statements else ""))

    def start(self) -> PostgresServer:
        """Start the server and wait until it accepts connections."""
        subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                 "-w", "-t", "30", "start"), check=True, capture_output=True)
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate` is a crash: no checkpoint)."""
        subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"),
                       check=False, capture_output=True)

    def running(self) -> bool:
        """Whether the postmaster is up."""
        res = subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "status"),
                             capture_output=True)
        return res.returncode == 0

    def url(self, user: str = SUPERUSER, password: str = PASSWORD, dbname: str = "postgres") -> str:
        """A libpq URL to this server over TCP loopback."""
        return (f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{self.port}"
                f"/{dbname}?connect_timeout=5")

    def create_database(self, name: str) -> str:
        """A fresh database; returns the superuser URL to it."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(dbname=name)

    def files_containing(self, needle: bytes) -> list[Path]:
        """Every file of the cluster (data, WAL, log) whose bytes contain `needle`."""
        hits = []
        for path in self.root.rglob("*"):
            if path.is_file():
                try:
                    if needle in path.read_bytes():
                        hits.append(path)
                except OSError:
                    continue
        return hits

    def cleanup(self) -> None:
        """Stop the server and remove its folder."""
        self.stop("immediate")
        deadline = time.monotonic() + 10
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.root, ignore_errors=True)
