"""The declaration side of a JSONL sidecar kind: its :class:`RowSpec`, the reader it hands its
ArtifactKind (:func:`jsonl_reader`) and the bundle protocol (:class:`Bundle`, :class:`Bundled`).

A kind declares its columns with :func:`~vakaudit.artifacts._columns.col` and gathers them in a
:class:`RowSpec`, which gives the kind its reader and its ArtifactKind. The reading itself
(:func:`~vakaudit.artifacts._jsonl.read_jsonl`, :class:`~vakaudit.artifacts._jsonl.JsonlBundle`)
is in ``_jsonl``, imported by the reader on its first file: the registry imports every kind
module, and this one imports no pyarrow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from vakaudit.artifacts._base import ArtifactKind, ReadContext
from vakaudit.artifacts._columns import COMMON_FIELDS, TRACE_COLS, Col, FileCol, row_schema
from vakaudit.artifacts._files import basename

if TYPE_CHECKING:
    import pyarrow as pa

    from vakaudit.artifacts._declare import DSchema

# reshapes one decoded object, or returns None when it is not a record of the kind; it sees the object
# only (no line, no context), so a whole block of rows can be prepared with one ``map``
Prepare = Callable[[dict[str, Any]], dict[str, Any] | None]


@dataclass(frozen=True, slots=True)
class RowSpec:
    """The typed columns of a JSONL kind: ``schema`` is common fields + ``cols`` (+ trace columns)."""

    cols: tuple[Col, ...]
    trace: bool = True  # G2 rows may carry trace/actor
    prepare: Prepare | None = None  # reshape a decoded object, or None = not a record of this kind
    file_cols: tuple[FileCol, ...] = ()  # placed right after the common fields
    # top-level keys whose presence makes ``prepare`` return the object unchanged: the compiled reader
    # takes a chunk only when every line has them (a spec with a prepare and no such keys never does)
    fast_when: tuple[str, ...] = ()

    @property
    def declared_schema(self) -> DSchema:
        common = COMMON_FIELDS + tuple(c.decl for c in self.file_cols)
        return row_schema(self.cols, trace=self.trace, common=common)

    @property
    def schema(self) -> pa.Schema:
        return self.declared_schema.arrow()

    @property
    def columns(self) -> tuple[Col, ...]:
        return self.cols + TRACE_COLS if self.trace else self.cols

    def reader(self, names: tuple[str, ...] = ()) -> Callable[[ReadContext], Iterator[pa.RecordBatch]]:
        """A reader; with ``names``, files of other basenames (locks, temp files) give no rows."""

        return jsonl_reader(self, (lambda rel_path: basename(rel_path) in names) if names else None)

    def kind(self, doc: str | None, *, names: tuple[str, ...] = (), **fields: Any) -> ArtifactKind:
        """The ArtifactKind of a JSONL sidecar: description, schema and reader come from here."""
        return ArtifactKind(description=doc or "", declared_schema=self.declared_schema, reader=self.reader(names), **fields)


BUNDLE_FILE_BYTES = 512 << 10  # a JSONL file this big is read alone (its rows may take their own part)


class Bundle(Protocol):
    """Reads many files of one kind and gives their rows as batches built for many files at once."""

    schema: pa.Schema

    def add(self, ctx: ReadContext) -> tuple[int, int | None]:
        """Read one file: ``(rows, end)``, ``end`` the offset after its last row (None: no spans).
        Should reading fail, the file's rows are dropped again and the error raised."""
        ...

    @property
    def full(self) -> bool:
        """Enough rows are pending that they should be taken (:meth:`batches`) now."""
        ...

    def batches(self) -> list[pa.RecordBatch]:
        """The rows of the files added since the last call, in file order (raises on a bug building
        them: the caller then reads those files one by one)."""
        ...


@dataclass(frozen=True, slots=True)
class Bundled:
    """Set as ``reader.bundle`` on a kind's reader whose files can be read together: ``new()`` makes a
    :class:`Bundle`, for files smaller than ``file_bytes`` (a bigger file is read alone)."""

    new: Callable[[], Bundle]
    file_bytes: int


def jsonl_reader(
    spec: RowSpec, accepts: Callable[[str], bool] | None = None
) -> Callable[[ReadContext], Iterator[pa.RecordBatch]]:
    """The reader of a JSONL kind: :func:`~vakaudit.artifacts._jsonl.read_jsonl` over ``spec`` for
    the files ``accepts`` (by relative path; default all; the reader's ``accepts``), no rows and no
    finding for the others. Its ``bundle`` reads small files together
    (:class:`~vakaudit.artifacts._jsonl.JsonlBundle`), its ``findings`` reads a file for its findings
    alone (:func:`~vakaudit.artifacts._jsonl_rows.jsonl_findings`)."""

    def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
        if accepts is not None and not accepts(ctx.rel_path):
            return iter(())
        from vakaudit.artifacts._jsonl import read_jsonl

        return read_jsonl(ctx, spec)

    def bundle() -> Bundle:
        from vakaudit.artifacts._jsonl import JsonlBundle

        return JsonlBundle(spec, accepts=accepts)

    def findings(ctx: ReadContext) -> None:
        """The reader's findings of one file, without its rows (:func:`~vakaudit.artifacts._jsonl_rows.jsonl_findings`)."""
        if accepts is not None and not accepts(ctx.rel_path):
            return
        from vakaudit.artifacts._jsonl_rows import jsonl_findings

        jsonl_findings(ctx, spec)

    reader.bundle = Bundled(bundle, BUNDLE_FILE_BYTES)  # type: ignore[attr-defined]
    reader.findings = findings  # type: ignore[attr-defined]
    reader.accepts = accepts  # type: ignore[attr-defined]
    return reader
