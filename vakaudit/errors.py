"""Errors raised to callers of vakaudit.

Data problems inside a home are never raised: they become :class:`vakaudit.findings.Finding`
rows. Exceptions are for the caller or the tool being wrong::

    VakauditError
    ├── HomeNotFoundError      the home (or scan dir) given does not exist
    │   └── NotAHomeError      the directory exists but holds nothing vak writes
    ├── UsageError             a bad option or argument combination
    ├── LedgerError            a ledger operation the caller asked for cannot be done
    │   ├── LockedError        the ledger is locked by another handle (or the handle is read-only)
    │   ├── ExistsError        create() on a non-empty file
    │   ├── CorruptError       an append/branch names an unknown entry, or a line is not UTF-8
    │   └── UnreadableError    the ledger file cannot be opened for reading (permissions, a FIFO)
    ├── ScanError              a scan output directory cannot be used
    ├── KeyFileError           a key file or credential store cannot be read or opened
    └── ObjectUnavailableError a tenant object cannot be produced (missing, no grant, no key, erased)
"""

from __future__ import annotations


class VakauditError(Exception):
    """Base class of every error vakaudit raises on purpose."""


class HomeNotFoundError(VakauditError):
    """The home or scan directory named by the caller does not exist."""


class NotAHomeError(HomeNotFoundError):
    """The directory named as a home exists but holds nothing vak writes."""


class UsageError(VakauditError):
    """The caller combined options or arguments that cannot work together."""


class LedgerError(VakauditError):
    """A session-ledger operation cannot be carried out."""


class LockedError(LedgerError):
    """The ledger is locked by another writable handle, or this handle is read-only."""


class ExistsError(LedgerError):
    """``SessionLog.create`` was asked to write a header into a non-empty file."""


class CorruptError(LedgerError):
    """A referenced entry is unknown, or a line cannot be decoded at all."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


class UnreadableError(LedgerError, OSError):
    """The ledger file cannot be opened for reading: no permission, or not a regular file (also an
    ``OSError``, with the ``errno`` of the failed open when there was one)."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class ScanError(VakauditError):
    """A scan output directory or manifest cannot be used."""


class KeyFileError(VakauditError):
    """A key file (or vak's credential store) cannot be read, parsed or opened with the passphrase."""


class ObjectUnavailableError(VakauditError):
    """A 7.0 tenant object cannot be produced for the scope asked; ``reason`` says why.

    Reasons: ``missing`` (no body), ``no_grant`` (no grant for the scope), ``locked`` (no key to
    unwrap it), ``erased`` (the scope was destroyed or revoked), ``undecryptable`` (the grant's
    key does not open the body, or the body does not decompress).
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
