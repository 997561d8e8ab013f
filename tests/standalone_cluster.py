"""A Spark standalone cluster on loopback (one master, N workers), started from the pyspark
installation's own launcher (``bin/spark-class``): the pip wheel has no ``sbin/start-master.sh``.

Used by the cluster test to submit jobs with ``spark-submit --master spark://127.0.0.1:<port>``,
so that executors run in their own JVMs and Python workers, apart from the driver.  Every process
is started here in its own process group and stopped by ``stop()`` (also on failure).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

LOOPBACK = "127.0.0.1"
DEFAULT_MASTER_PORT = 7077


def spark_home() -> Path:
    """The pyspark installation directory (it holds ``bin/`` and ``jars/``)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def free_port(preferred: int | None = None) -> int:
    """``preferred`` if nothing listens on it, else a free port the OS picks."""
    if preferred is not None:
        with socket.socket() as probe:
            try:
                probe.bind((LOOPBACK, preferred))
                return preferred
            except OSError:
                pass
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


class ClusterError(RuntimeError):
    pass


class StandaloneCluster:
    """Master + ``workers`` workers with ``cores`` cores and ``memory`` each, logs under ``work_dir``."""

    def __init__(self, work_dir: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                 master_port: int = DEFAULT_MASTER_PORT, start_timeout_s: float = 180.0):
        self.work_dir = Path(work_dir)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.master_port = free_port(master_port)
        self.master_ui_port = free_port()
        self.start_timeout_s = start_timeout_s
        self.processes: list[subprocess.Popen] = []

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    def environment(self) -> dict[str, str]:
        """Environment of the cluster's daemons and of ``spark-submit``: loopback only, the
        test's Python for driver and Python workers, scratch space under ``work_dir``."""
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_LOCAL_DIRS": str(self.work_dir / "local"),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_DAEMON_MEMORY": "512m",
        })
        return env

    def _launch(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.work_dir / f"{name}.log", "wb")
        process = subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *args],
            env=self.environment(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        self.processes.append(process)
        return process

    def start(self) -> StandaloneCluster:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "local").mkdir(exist_ok=True)
        self._launch("master", "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
                     "--port", str(self.master_port), "--webui-port", str(self.master_ui_port))
        for i in range(self.workers):
            worker_dir = self.work_dir / f"worker-{i}"
            worker_dir.mkdir(exist_ok=True)
            self._launch(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                         "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
                         "--work-dir", str(worker_dir), self.master_url)
        self._wait_for_workers()
        return self

    def restart_worker(self, i: int) -> None:
        """Start worker ``i`` again (after it was killed), registered with the master."""
        worker_dir = self.work_dir / f"worker-{i}"
        self._launch(f"worker-{i}-again", "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                     "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
                     "--work-dir", str(worker_dir), self.master_url)

    def master_state(self) -> dict:
        """The master's JSON status (``aliveworkers``, ``workers``, ``activeapps``, …)."""
        with urllib.request.urlopen(f"http://{LOOPBACK}:{self.master_ui_port}/json/", timeout=5) as response:
            return json.load(response)

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise ClusterError(f"a cluster daemon exited with {process.returncode}: {self.logs_tail()}")
            try:
                if self.master_state().get("aliveworkers", 0) >= self.workers:
                    return
            except OSError:
                pass
            time.sleep(1.0)
        raise ClusterError(f"{self.workers} workers not registered after {self.start_timeout_s:.0f}s: {self.logs_tail()}")

    def logs_tail(self, lines: int = 15) -> str:
        parts = []
        for log in sorted(self.work_dir.glob("*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def submit(self, app: str, app_args: list[str], submit_args: list[str], log_path: Path,
               timeout_s: float = 1200.0) -> subprocess.CompletedProcess:
        """``spark-submit --master <this cluster> <submit_args> <app> <app_args>``, output to ``log_path``."""
        command = [str(spark_home() / "bin" / "spark-submit"), "--master", self.master_url, *submit_args, app, *app_args]
        with open(log_path, "wb") as log:
            return subprocess.run(command, env=self.environment(), stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout_s, check=False)

    def submit_in_background(self, app: str, app_args: list[str], submit_args: list[str],
                             log_path: Path) -> subprocess.Popen:
        """As :meth:`submit`, without waiting: the caller watches ``log_path`` and waits."""
        command = [str(spark_home() / "bin" / "spark-submit"), "--master", self.master_url, *submit_args, app, *app_args]
        with open(log_path, "wb") as log:
            return subprocess.Popen(command, env=self.environment(), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)

    def executor_pids(self) -> list[int]:
        """Process ids of the executor JVMs this cluster's workers run now (an executor's working
        directory is ``<worker dir>/<app id>/<executor id>``)."""
        pids = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes()
                cwd = os.readlink(proc / "cwd")
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if b"CoarseGrainedExecutorBackend" in cmdline and cwd.startswith(str(self.work_dir)):
                pids.append(int(proc.name))
        return sorted(pids)

    def stop(self) -> None:
        """Stop workers first, then the master: SIGTERM to each daemon's process group, SIGKILL
        after 30 s.  Executors are children of their worker and go with it."""
        for process in reversed(self.processes):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=30)
        self.processes.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
