"""Arrow types, fields and schemas declared without importing pyarrow.

The registry imports every artifact kind module (``all_kinds``: its patterns and card; classification
only the module of each kind it finds), and many commands (``verify`` of a 7.0 home, ``kinds``) never
build a table. A kind module therefore declares its
columns with these, and the pyarrow object is built on first use by :func:`arrow`: importing
pyarrow costs a process ~25 ms and ~35 MB before it has read a byte. The names follow pyarrow's
(``string()``, ``int64()``, ``field(...)``, ``schema([...])``), so a declaration reads the same.
Imports nothing of vakaudit and no pyarrow at import.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class Declared:
    """A pyarrow object described; :meth:`arrow` builds it once (pyarrow is imported then)."""

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: Any = None

    def arrow(self) -> Any:
        built = self._built
        if built is None:
            built = self._built = self._build()
        return built

    def _build(self) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


class DType(Declared):
    """A declared data type: pyarrow's factory ``name`` called with ``args``."""

    __slots__ = ("name", "args")

    def __init__(self, name: str, *args: Any) -> None:
        super().__init__()
        self.name = name
        self.args = args

    def _build(self) -> Any:
        import pyarrow as pa

        return getattr(pa, self.name)(*(arrow(a) for a in self.args))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return (self.name, self.args) == (other.name, other.args)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.args))

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.args))})"


class DField(Declared):
    """A declared field: name, declared (or pyarrow) type, nullability."""

    __slots__ = ("name", "type", "nullable")

    def __init__(self, name: str, type_: DType | Any, nullable: bool = True) -> None:
        super().__init__()
        self.name = name
        self.type = type_
        self.nullable = nullable

    def _build(self) -> Any:
        import pyarrow as pa

        return pa.field(self.name, arrow(self.type), nullable=self.nullable)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DField):
            return (self.name, self.type, self.nullable) == (other.name, other.type, other.nullable)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.nullable))

    def __repr__(self) -> str:
        return f"field({self.name!r}, {self.type!r}{'' if self.nullable else ', nullable=False'})"


class DSchema(Declared):
    """A declared schema: its fields in order (``names``, ``field(name)`` and iteration need no pyarrow)."""

    __slots__ = ("fields",)

    def __init__(self, fields: Iterable[DField]) -> None:
        super().__init__()
        self.fields = tuple(fields)

    def _build(self) -> Any:
        import pyarrow as pa

        return pa.schema([arrow(f) for f in self.fields])

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def __iter__(self) -> Iterator[DField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


def arrow(value: Any) -> Any:
    """The pyarrow object of a declaration; anything else (a pyarrow object already, None) as is."""
    return value.arrow() if isinstance(value, Declared) else value


_TYPES: dict[tuple[str, tuple[Any, ...]], DType] = {}


def _type(name: str, *args: Any) -> DType:
    t = _TYPES.get((name, args))
    if t is None:
        t = _TYPES[(name, args)] = DType(name, *args)
    return t


def string() -> DType:
    return _type("string")


def int64() -> DType:
    return _type("int64")


def float64() -> DType:
    return _type("float64")


def bool_() -> DType:
    return _type("bool_")


def timestamp(unit: str, tz: str | None = None) -> DType:
    return _type("timestamp", unit, tz)


def list_(value_type: DType) -> DType:
    return _type("list_", value_type)


def field(name: str, type_: DType | Any, nullable: bool = True) -> DField:
    return DField(name, type_, nullable)


def schema(fields: Iterable[DField]) -> DSchema:
    return DSchema(fields)


#: how a column's decoded JSON value is coerced, by declared type (``_columns.coercer``)
CATEGORY = {"string": "string", "int64": "integer", "float64": "floating", "bool_": "boolean",
            "timestamp": "timestamp"}  # fmt: skip


def exports(module: str, **declared: Any) -> Any:
    """A module ``__getattr__`` (PEP 562) that gives each of ``declared`` as its pyarrow object, so
    ``from <module> import SCHEMA`` still gets a ``pa.Schema`` while importing the module builds none.
    A value may also be a dict of ``name -> (declared schema, text)`` (a module's table list)."""

    def __getattr__(name: str) -> Any:
        if name not in declared:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = declared[name]
        if isinstance(value, dict):
            return {k: (arrow(v[0]), *v[1:]) for k, v in value.items()}
        return arrow(value)

    return __getattr__
