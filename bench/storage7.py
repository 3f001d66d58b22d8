"""Benchmark: reading a 7.0 data-baseline home next to the floors of its bytes.

The home: the session ledgers of the ``measured`` synthetic home (bench/scan.py's, same seed, cached
in bench/_work/) written again in the 7.0 form by vakaudit's storage writer: one segment directory
per conversation, each entry one frame, zstd level 3 as vak compresses, sealed with AES-256-GCM under
the conversation's scope key (S2), segments sealed every 4 MiB of entries with their ``seals.log``
entry, the last one open; the tenant's scope keys wrapped under KEK 0. A half-size home (every other
conversation) and the ledgers of bench/scan.py's ``10x`` home (600 conversations) in the same form
show whether peak memory grows with the home and what each further byte costs once start-up is paid
(the marginal ratio: the difference of the medians between the 10x and the measured home, against
the same difference of the floor).

Measured, each in a fresh process (wall time, CPU time and peak RSS from ``wait4``), min / median /
max of the runs:

- ``floor: SHA-256``: SHA-256 of every segment file's bytes in 1 MiB reads (hashlib, one pass);
- ``vakaudit verify`` keyless: the whole command (walk, classify, every chain's links and seals,
  tenant store and keys), ``--json`` to /dev/null;
- ``floor: AES-GCM + zstd``: open and decompress every frame of every ledger (cryptography's AESGCM
  and zstandard, one pass, the frame layout read inline), what any unlocked reader must do at least;
- ``vakaudit verify --keys``: the whole command unlocked (every frame opened);
- ``vakaudit scan --keys --full``: the whole unlocked scan, every table written (against the
  AES-GCM + zstd floor), and a keyless rescan of the unchanged home into the same ``--out``.

    python bench/storage7.py            # build (once), measure, write bench/results/storage7.md
    python bench/storage7.py measured half   # only these homes (measured, half, 10x)
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / "_work"
RESULTS = HERE / "results" / "storage7.md"
RUNS = 5
# name -> (every n-th conversation, bench/scan.py home it is taken from)
HOMES = {"measured": (1, "measured"), "half": (2, "measured"), "10x": (1, "10x")}
LOAD = [0.0]  # load average when the measurements started
SEGMENT_BYTES = 4 << 20
KEK0 = bytes(range(32))  # a benchmark key, not a secret
ID_KEY = bytes(range(32, 64))


def _source_home(source: str) -> Path:
    sys.path.insert(0, str(HERE))
    import scan  # bench/scan.py: its cached synthetic homes

    return scan.build(source)


def build(name: str, every: int, source: str = "measured") -> Path:
    """The 7.0 form of the ``source`` home's ledgers (every ``every``-th conversation)."""
    home = WORK / f"v7_{name}"
    marker = WORK / f"v7_{name}.built"
    if marker.exists() and home.is_dir():
        return home
    from vakaudit.storage.keys import LOCAL_TENANT
    from vakaudit.storage.tenant_writer import TenantWriter, write_json_key_file
    from vakaudit.storage.writer import SegmentSpec, write_segment_set

    if home.exists():
        shutil.rmtree(home)
    src = _source_home(source)
    ledgers = sorted(src.glob("agents/*/sessions/*/*.jsonl"))[::every]
    tenant = home / "tenants" / LOCAL_TENANT
    counter = [0]

    def rnd(n: int) -> bytes:  # deterministic nonces and keys: the same bytes on every build
        counter[0] += 1
        out = b""
        while len(out) < n:
            out += hashlib.sha256(f"bench7:{counter[0]}:{len(out)}".encode()).digest()
        return out[:n]

    tw = TenantWriter(tenant, keks={0: KEK0}, id_key=ID_KEY, random=rnd)
    for ledger in ledgers:
        sid = ledger.stem
        scope = f"conversation:{sid}"
        key = tw.scope_key(scope)
        entries = [line for line in ledger.read_bytes().split(b"\n") if line]
        specs, chunk, size = [], [], 0
        for e in entries:
            chunk.append(e)
            size += len(e)
            if size >= SEGMENT_BYTES:
                specs.append(SegmentSpec(chunk))
                chunk, size = [], 0
        specs.append(SegmentSpec(chunk, sealed=False))
        rel = f"agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000b001/{sid}"
        write_segment_set(home / rel, specs, key=key, scope=scope, compress="zstd", nonces=lambda: rnd(12))
    write_json_key_file(WORK / f"v7_{name}-keys.json", {0: KEK0}, ID_KEY)
    marker.write_text("built\n")
    return home


def segment_files(home: Path) -> list[Path]:
    return sorted(p for p in home.glob("agents/*/sessions/*/*/*") if p.name.startswith(("seg-", "seals.")))


# ----------------------------------------------------------------------------- the floors (children)


def floor_sha256(home: Path) -> dict:
    total = 0
    for p in segment_files(home):
        h = hashlib.sha256()
        with open(p, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
                total += len(block)
    return {"bytes": total}


def floor_open(home: Path, keys_file: Path) -> dict:
    """Unwrap each conversation's key, then open and decompress every frame of its segments."""
    import zstandard
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    keys = json.loads(keys_file.read_text())
    kek = AESGCM(bytes.fromhex(keys["keks"]["0"]))
    tenant = next(home.glob("tenants/*"))
    dctx = zstandard.ZstdDecompressor()
    frames = plain = 0
    for d in sorted(home.glob("agents/*/sessions/*/*")):
        scope = (d / "KEY").read_text()
        wrapped = (tenant / "keys/scopes/keys" / scope.encode().hex()).read_bytes()
        version, n = struct.unpack_from("<II", wrapped, 0)
        body = wrapped[8 + n :]
        aead = AESGCM(kek.decrypt(body[:12], body[12:], wrapped[:4] + wrapped[8 : 8 + n]))
        for seg in sorted(d.glob("seg-*")):
            data = seg.read_bytes()
            off = 9 if seg.suffix == ".sealed" else 0  # VAKSEG01 + its flag byte (frames copied raw)
            base = off
            while off < len(data):
                (length,) = struct.unpack_from("<I", data, off)
                payload = data[off + 5 : off + 4 + length]  # after the flags byte
                sealed = aead.decrypt(payload[:12], payload[12:], struct.pack("<Q", off - base))
                plain += len(dctx.decompress(sealed))
                frames += 1
                off += 4 + length + 32
    return {"frames": frames, "plain_bytes": plain}


def child(what: str, home: str, keys: str) -> None:
    out = floor_sha256(Path(home)) if what == "sha256" else floor_open(Path(home), Path(keys))
    print(json.dumps(out))


# ----------------------------------------------------------------------------- measuring processes


def run(argv: list[str], runs: int, env: dict[str, str] | None = None) -> dict:
    walls, cpus, rss = [], [], []
    last = None
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                                env=None if env is None else {**os.environ, **env})
        _, status, usage = os.wait4(proc.pid, 0)
        out = proc.stdout.read()
        proc.stdout.close()
        proc.stderr.close()
        walls.append(time.perf_counter() - t)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)
        rc = os.waitstatus_to_exitcode(status)
        if rc not in (0, 1):
            raise SystemExit(f"{argv} exited {rc}")
        last = out
    return {"min": min(walls), "median": statistics.median(walls), "max": max(walls),
            "cpu": statistics.median(cpus), "rss_mb": max(rss), "out": last}  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--build":
        build(sys.argv[2], *HOMES[sys.argv[2]])
        return
    WORK.mkdir(exist_ok=True)
    LOAD[0] = os.getloadavg()[0]
    wanted = sys.argv[1:] or list(HOMES)
    if unknown := [n for n in wanted if n not in HOMES]:
        raise SystemExit(f"unknown home(s) {', '.join(unknown)}; known: {', '.join(HOMES)}")
    py = sys.executable
    # built in a child: Linux counts a process's peak RSS from before its exec, so a parent that had
    # imported vakaudit would set the floor of every measured child's peak
    for name in wanted:
        subprocess.run([py, __file__, "--build", name], check=True)
    homes = {name: WORK / f"v7_{name}" for name in wanted}
    harness_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = []
    for name, home in homes.items():
        keys = WORK / f"v7_{name}-keys.json"
        size = sum(p.stat().st_size for p in segment_files(home))
        whole = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
        cases = [
            ("floor: SHA-256 of the segment bytes", [py, __file__, "--child", "sha256", str(home), str(keys)]),
            ("vakaudit verify (keyless)", [py, "-m", "vakaudit", "verify", str(home), "--json"]),
            ("vakaudit verify (keyless), VAKAUDIT_NO_NATIVE=1", [py, "-m", "vakaudit", "verify", str(home), "--json"]),
            ("python -m vakaudit --help (start-up alone)", [py, "-m", "vakaudit", "--help"]),
            ("floor: AES-GCM + zstd of every frame", [py, __file__, "--child", "open", str(home), str(keys)]),
            ("vakaudit verify --keys", [py, "-m", "vakaudit", "verify", str(home), "--json", "--keys", str(keys)]),
            ("vakaudit scan --keys --full (every frame opened, every table written)",
             [py, "-m", "vakaudit", "scan", str(home), "--out", str(WORK / f"scan7_{name}"), "--keys", str(keys),
              "--full", "-q"]),
            ("vakaudit scan, keyless rescan of the unchanged home",
             [py, "-m", "vakaudit", "scan", str(home), "--out", str(WORK / f"rescan7_{name}"), "-q"]),
        ]
        # the rescan's previous scan
        subprocess.run([py, "-m", "vakaudit", "scan", str(home), "--out", str(WORK / f"rescan7_{name}"), "--full",
                        "-q"], check=True, capture_output=True)
        measured = {label: run(argv, RUNS, {"VAKAUDIT_NO_NATIVE": "1"} if "NO_NATIVE" in label else None)
                    for label, argv in cases}
        for label, m in measured.items():
            rows.append((name, size, whole, label, m))
        print(name, {k: round(v["median"], 3) for k, v in measured.items()}, file=sys.stderr)
    lines = [
        "# bench/storage7.py: a 7.0 home next to the floors of its bytes",
        "",
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{RUNS} runs each, each a fresh process; wall time min / median / max, CPU (user+sys) median, "
        "peak RSS max; the ratio is of the medians (wall, then CPU). The homes: the measured profile's "
        "session ledgers in the 7.0 form (S2, zstd level 3, AES-256-GCM, 4 MiB segments), half of them, and the "
        "ledgers of the 10x home (600 conversations) in the same form. "
        f"Load average (1 min) before / after: {LOAD[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
        "cores: on a shared machine CPU time is the figure to compare. "
        f"A peak RSS cannot read below this harness's own ({harness_mb:.0f} MB): a child's peak "
        "includes what it was forked with.",
        "",
        "| home | segment bytes | what | min s | median s | max s | CPU s | peak RSS MB | ratio to its floor |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, size, _whole, label, m in rows:
        floor_label = ("floor: SHA-256 of the segment bytes" if "keys" not in label and "AES" not in label
                       else "floor: AES-GCM + zstd of every frame")  # fmt: skip
        floor = next(r[4] for r in rows if r[0] == name and r[3] == floor_label)
        ratio = ("" if label.startswith("floor") else
                 f"{m['median'] / floor['median']:.2f}x (CPU {m['cpu'] / floor['cpu']:.2f}x)")
        lines.append(f"| {name} | {size:,} | {label} | {m['min']:.3f} | {m['median']:.3f} | {m['max']:.3f} | "
                     f"{m['cpu']:.2f} | {m['rss_mb']:.0f} | {ratio} |")  # fmt: skip
    med = {(r[0], r[3]): r[4] for r in rows}
    if ("10x", "vakaudit verify (keyless)") in med and ("measured", "vakaudit verify (keyless)") in med:
        lines += ["", "Marginal cost, 10x home against the measured one (difference of medians, wall; CPU in "
                  "brackets):", ""]
        for label, floor_label in (("vakaudit verify (keyless)", "floor: SHA-256 of the segment bytes"),
                                   ("vakaudit verify --keys", "floor: AES-GCM + zstd of every frame")):
            d = {k: med[("10x", k)]["median"] - med[("measured", k)]["median"] for k in (label, floor_label)}
            c = {k: med[("10x", k)]["cpu"] - med[("measured", k)]["cpu"] for k in (label, floor_label)}
            lines.append(f"- {label}: {d[label]:.3f} s more against {d[floor_label]:.3f} s more for its floor: "
                         f"{d[label] / d[floor_label]:.2f}x (CPU {c[label] / c[floor_label]:.2f}x)")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(RESULTS.read_text())


if __name__ == "__main__":
    main()
