"""Build configuration for vakaudit's one compiled module (everything else is in pyproject.toml).

``vakaudit._native._linescan`` holds what ``scan`` and ``verify`` read with: the session-ledger line
scanner (framing, SHA-256 with the x86 SHA extensions or OpenSSL's libcrypto, envelope, strict JSON
check, entries rows in Arrow buffers), the JSONL sidecar chunk reader and the checkpoint compact
pass. It is optional: when no C compiler or OpenSSL headers are present the install still succeeds
and vakaudit uses its pure-Python readers, which give identical results.
"""

from pathlib import Path

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "vakaudit._native._linescan",
            ["vakaudit/_native/linescan.c"],
            # linescan.c includes its parts (one translation unit): a change to any of them rebuilds it
            depends=sorted(str(p) for p in Path("vakaudit/_native").glob("*.[ch]") if p.name != "linescan.c"),
            libraries=["crypto"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
