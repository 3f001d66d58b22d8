"""Build configuration for vakaudit's one compiled module (everything else is in pyproject.toml).

``vakaudit._native._linescan`` is the ledger line scanner (framing, SHA-256 via OpenSSL's libcrypto,
envelope, strict JSON check). It is optional: when no C compiler or OpenSSL headers are present the
install still succeeds and vakaudit uses its pure-Python reader, which gives identical results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "vakaudit._native._linescan",
            ["vakaudit/_native/linescan.c"],
            libraries=["crypto"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
