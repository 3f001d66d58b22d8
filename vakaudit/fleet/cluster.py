"""Run a fleet scan on Dask distributed: one task per home, a local cluster or a running scheduler.

Local by default: ``LocalCluster`` with ``workers`` single-threaded worker processes listening on
127.0.0.1 only, no dashboard. Given ``scheduler`` (``tcp://host:8786``), the tasks go to that
cluster; its workers must import the same vakaudit and see the homes and the lake at the same paths.
Dask reschedules a task whose worker was lost; ``retries`` more attempts are allowed for a task that
raised (a home that fails is an outcome, not an exception, so those are rare). Progress goes to an
optional callback; nothing here prints.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.errors import UsageError
from vakaudit.fleet import lake as L
from vakaudit.fleet.task import scan_into_lake


@dataclass(frozen=True, slots=True)
class FleetScanResult:
    """What a fleet scan did: one outcome per home, in the order the homes were given."""

    lake: Path
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [o for o in self.outcomes if not o["ok"]]

    def summary(self) -> dict[str, Any]:
        return {
            "lake": str(self.lake),
            "homes": len(self.outcomes),
            "scanned": len(self.outcomes) - len(self.failed),
            "failed": len(self.failed),
            "outcomes": self.outcomes,
        }


def _check_keys(keys: str | None) -> None:
    """A key file that is not there is the user's mistake, said before any home is scanned (each
    worker reads the file itself: the key material never travels through the scheduler)."""
    if keys is not None and keys != "home" and not Path(keys).expanduser().is_file():
        raise UsageError(f"--keys {keys}: no such key file (a JSON key file or vak's key file; see docs/keys.md)")


def fleet_scan(
    homes: Iterable[str | os.PathLike[str]],
    lake: str | os.PathLike[str],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    keys: str | None = None,
    full: bool = False,
    retries: int = 2,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> FleetScanResult:
    """Scan every home into ``lake`` (created when missing); ``progress(outcome)`` after each home."""
    from vakaudit import __version__

    paths = list(dict.fromkeys(str(Path(h).expanduser().resolve()) for h in homes))
    if not paths:
        raise UsageError("no homes given; name homes or pass --from-file LIST")
    if scheduler and workers:
        raise UsageError("--scheduler and --workers exclude each other: workers belong to the scheduler's cluster")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    _check_keys(keys)
    lake_p = L.check_output_path(Path(lake), [Path(p) for p in paths], folder=True)
    L.init_lake(lake_p, __version__)
    run_id = uuid.uuid4().hex
    try:
        outcomes = _run(paths, lake_p, run_id, scheduler, workers, keys, full, retries, progress)
    finally:
        L.clear_staging(lake_p, run_id)
    return FleetScanResult(lake_p, outcomes)


def _run(
    paths: list[str],
    lake: Path,
    run_id: str,
    scheduler: str | None,
    workers: int | None,
    keys: str | None,
    full: bool,
    retries: int,
    progress: Callable[[dict[str, Any]], None] | None,
) -> list[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UsageError(
            "vakaudit fleet scan runs on Dask distributed, which is not installed: pip install 'vakaudit[fleet]'"
        ) from None

    cluster = None
    if scheduler:
        client = Client(scheduler, timeout="30s")
    else:
        n = workers or min(os.cpu_count() or 1, 4)
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
        )
        client = Client(cluster)
    try:
        futures = {
            client.submit(
                scan_into_lake, p, str(lake), run_id, keys, full,
                key=f"vakaudit-fleet-{run_id[:8]}-{i}", retries=retries, pure=False,
            ): p
            for i, p in enumerate(paths)
        }
        got: dict[str, dict[str, Any]] = {}
        for fut in as_completed(list(futures)):
            home = futures[fut]
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - the task failed on every attempt (e.g. KilledWorker)
                outcome = {"home": home, "home_id": None, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
            got[home] = outcome
            if progress:
                progress(outcome)
        return [got[p] for p in paths]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
