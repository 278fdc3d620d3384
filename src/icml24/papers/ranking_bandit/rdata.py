"""A small reader for R's binary serialization (XDR), enough to load data frames without R.

Handles the containers R writes data into: ``.rds`` (one serialized object), ``.rda``/``.RData``
(``RDX2``/``RDX3`` + a pairlist of named objects) and a package's lazy-load database
(``Rdata.rdx`` index + ``Rdata.rdb`` records, as in ``dslabs/data/``), each gzip/bzip2/xz/zlib
compressed. Supported SEXP types: NULL, symbols, pairlists, logical/integer/double/complex/character/
raw vectors, lists, environments (read, contents discarded), references, and the ALTREP forms R 3.5+
writes for compact sequences, deferred strings and wrappers. Format: R Internals, "Serialization
Formats" (https://cran.r-project.org/doc/manuals/r-release/R-ints.html#Serialization-Formats).
"""

from __future__ import annotations

import builtins
import bz2
import gzip
import lzma
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, cast

import numpy as np

NA_INTEGER = -(2 ** 31)
# SEXP type codes (R Internals 1.1) and the pseudo-types of the serialization stream
NILSXP, SYMSXP, LISTSXP, CLOSXP, ENVSXP, PROMSXP, LANGSXP = 0, 1, 2, 3, 4, 5, 6
CHARSXP, LGLSXP, INTSXP, REALSXP, CPLXSXP, STRSXP, DOTSXP, VECSXP, EXPRSXP = 9, 10, 13, 14, 15, 16, 17, 19, 20
RAWSXP, S4SXP = 24, 25
ALTREP_SXP, BASEENV_SXP, EMPTYENV_SXP = 238, 241, 242
NAMESPACESXP, PACKAGESXP, PERSISTSXP = 249, 248, 247
MISSINGARG_SXP, BASENAMESPACE_SXP, UNBOUNDVALUE_SXP, GLOBALENV_SXP, NILVALUE_SXP, REFSXP = 251, 250, 252, 253, 254, 255


@dataclass
class RObject:
    """A decoded R value: its SEXP ``type``, payload ``value`` and ``attributes`` (name -> value)."""

    type: int
    value: Any
    attributes: dict[str, Any] = field(default_factory=dict)


class _Stream:
    """Big-endian XDR reader over an uncompressed serialization (after the 'X\\n' format line)."""

    refs: list[Any]

    def __init__(self, data: bytes):
        if data[:2] != b"X\n":
            raise ValueError("not an R XDR serialization (expected 'X\\n')")
        self.data, self.pos, self.refs = data, 2, []
        version = self.int()
        self.int(), self.int()  # writer R version, minimal reader version
        if version == 3:
            self.bytes(self.int())  # native encoding name
        elif version != 2:
            raise ValueError(f"unsupported R serialization version {version}")

    def int(self) -> int:
        (v,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return v

    def bytes(self, n: builtins.int) -> builtins.bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def length(self) -> builtins.int:
        n = self.int()
        if n == -1:  # long vector: two 32-bit halves
            hi, lo = self.int(), self.int()
            n = (hi << 32) + lo
        return n

    def array(self, n: builtins.int, fmt: str) -> np.ndarray:
        dtype = np.dtype(fmt)
        out = np.frombuffer(self.data, dtype=dtype, count=n, offset=self.pos).astype(dtype.newbyteorder("="))
        self.pos += n * dtype.itemsize
        return out

    def item(self) -> Any:
        flags = self.int()
        t, has_attr, has_tag = flags & 0xFF, bool(flags & (1 << 9)), bool(flags & (1 << 10))
        if t == NILVALUE_SXP:
            return None
        if t == REFSXP:
            idx = flags >> 8 or self.int()
            return self.refs[idx - 1]
        if t in (EMPTYENV_SXP, BASEENV_SXP, GLOBALENV_SXP, UNBOUNDVALUE_SXP, MISSINGARG_SXP, BASENAMESPACE_SXP):
            return RObject(t, None)
        if t in (PERSISTSXP, PACKAGESXP, NAMESPACESXP):
            self.int()  # always 0
            obj = RObject(t, [self.item().value for _ in range(self.int())])
            self.refs.append(obj)
            return obj
        if t == SYMSXP:
            obj = RObject(SYMSXP, self.item().value)
            self.refs.append(obj)
            return obj
        if t == ENVSXP:
            obj = RObject(ENVSXP, None)
            self.refs.append(obj)  # registered before its contents, which may refer to it
            self.int()  # locked
            _enclos, frame, hashtab, _attrib = self.item(), self.item(), self.item(), self.item()
            obj.value = {"frame": frame, "hashtab": hashtab}
            return obj
        if t in (LISTSXP, LANGSXP, CLOSXP, PROMSXP, DOTSXP):
            attrib = self.item() if has_attr else None
            tag = self.item() if has_tag else None
            car, cdr = self.item(), self.item()
            return RObject(t, (tag.value if isinstance(tag, RObject) else None, car, cdr), _pairlist_dict(attrib))
        if t == ALTREP_SXP:
            info, state, attrib = self.item(), self.item(), self.item()
            return _altrep(info, state, _pairlist_dict(attrib))
        if t == CHARSXP:
            n = self.int()
            return RObject(CHARSXP, None if n == -1 else self.bytes(n).decode("utf-8", errors="replace"))
        value: Any
        if t in (LGLSXP, INTSXP):
            value = self.array(self.length(), ">i4")
        elif t == REALSXP:
            value = self.array(self.length(), ">f8")
        elif t == CPLXSXP:
            pairs = self.array(2 * self.length(), ">f8")
            value = pairs[0::2] + 1j * pairs[1::2]
        elif t == STRSXP:
            value = [self.item().value for _ in range(self.length())]
        elif t in (VECSXP, EXPRSXP):
            value = [self.item() for _ in range(self.length())]
        elif t == RAWSXP:
            value = self.bytes(self.length())
        elif t == S4SXP:
            value = None
        else:
            raise ValueError(f"unsupported SEXP type {t} in R serialization")
        return RObject(t, value, _pairlist_dict(self.item()) if has_attr else {})


def _pairlist_dict(obj: Any) -> dict[str, Any]:
    """A tagged pairlist (attributes, .rda contents) as an ordered dict of tag -> value."""
    out = {}
    while isinstance(obj, RObject) and obj.type == LISTSXP:
        tag, car, cdr = obj.value
        out[tag] = car
        obj = cdr
    return out


def _altrep(info: RObject, state: Any, attributes: dict) -> RObject:
    """Materialise the ALTREP classes R writes for plain data (compact seqs, deferred strings, wrappers)."""
    cls = _pairlist_list(info)[0].value
    if cls == "compact_intseq":
        n, start, step = state.value
        return RObject(INTSXP, (start + step * np.arange(int(n))).astype(np.int32), attributes)
    if cls == "compact_realseq":
        n, start, step = state.value
        return RObject(REALSXP, start + step * np.arange(int(n), dtype=np.float64), attributes)
    if cls == "deferred_string":
        arg = _pairlist_list(state)[0]
        vals = arg.value
        text = [None if (arg.type != REALSXP and v == NA_INTEGER) or (arg.type == REALSXP and np.isnan(v))
                else (str(int(v)) if arg.type != REALSXP or float(v).is_integer() else repr(float(v))) for v in vals]
        return RObject(STRSXP, text, attributes)
    if cls.startswith("wrap_"):
        inner = _pairlist_list(state)[0]
        return RObject(inner.type, inner.value, attributes or inner.attributes)
    raise ValueError(f"unsupported ALTREP class {cls!r}")


def _pairlist_list(obj: Any) -> list:
    out = []
    while isinstance(obj, RObject) and obj.type == LISTSXP:
        out.append(obj.value[1])
        obj = obj.value[2]
    return out


def _decompress(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:3] == b"BZh":
        return bz2.decompress(data)
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(data)
    return data


def unserialize(data: bytes) -> Any:
    """Decode one serialized R object (bytes starting with 'X\\n')."""
    return _Stream(data).item()


def _lazyload_record(rdb: bytes, offset: int, length: int, compressed: Any) -> bytes:
    """One record of a lazy-load .rdb: 4-byte length, then (type byte for compress=2/3) the payload."""
    rec = rdb[offset:offset + length]
    if compressed in (2, 3):
        kind, body = rec[4:5], rec[5:]
        decoders = cast("dict[bytes, Callable[[bytes], bytes]]",
                        {b"Z": zlib.decompress, b"2": bz2.decompress, b"X": lzma.decompress, b"0": bytes})
        return decoders[kind](body)
    return zlib.decompress(rec[4:])


def read_r_objects(path: str | Path) -> dict[str, Any]:
    """All named objects in an .rda/.RData file or a lazy-load database (dir, .rdx or .rdb path);
    an .rds file gives ``{stem: object}``."""
    path = Path(path)
    if path.is_dir():
        path = path / "Rdata.rdx"
    if path.suffix.lower() in (".rdx", ".rdb"):
        index = to_python(unserialize(_decompress(path.with_suffix(".rdx").read_bytes())))
        rdb = path.with_suffix(".rdb").read_bytes()
        compressed = index.get("compressed", True)
        compressed = int(compressed[0]) if isinstance(compressed, (list, np.ndarray)) else compressed
        return {name: unserialize(_lazyload_record(rdb, int(pos[0]), int(pos[1]), compressed))
                for name, pos in index["variables"].items()}
    data = _decompress(path.read_bytes())
    if data[:5] in (b"RDX2\n", b"RDX3\n"):
        return _pairlist_dict(unserialize(data[5:]))
    return {path.stem: unserialize(data)}


def read_r_object(path: str | Path, name: str) -> Any:
    """One object by name, converted with :func:`to_python` (a data frame becomes {column: values})."""
    objects = read_r_objects(path)
    if name not in objects:
        key = next(iter(objects)) if len(objects) == 1 else None
        if key is None:
            raise KeyError(f"no object {name!r} in {path} (has {', '.join(sorted(objects)[:10])}...)")
        name = key
    return to_python(objects[name])


def to_python(obj: Any) -> Any:
    """R value -> Python: named lists/data frames -> dict, factors -> list of level strings,
    atomic vectors -> numpy arrays (NA integers -> NaN in float arrays), strings -> lists."""
    if not isinstance(obj, RObject):
        return obj
    attrs = obj.attributes
    names = attrs.get("names")
    cls = cast(RObject, attrs.get("class")).value if isinstance(attrs.get("class"), RObject) else []
    if obj.type == INTSXP and "factor" in cls:
        levels = attrs["levels"].value
        return [None if c == NA_INTEGER else levels[c - 1] for c in obj.value]
    if obj.type in (LGLSXP, INTSXP):
        vals = obj.value
        if np.any(vals == NA_INTEGER):
            out = vals.astype(np.float64)
            out[vals == NA_INTEGER] = np.nan
            return out
        return vals.astype(np.int64)
    if obj.type in (REALSXP, CPLXSXP, STRSXP, RAWSXP, CHARSXP, SYMSXP):
        return obj.value
    if obj.type in (VECSXP, EXPRSXP):
        items = [to_python(v) for v in obj.value]
        return dict(zip(names.value, items)) if isinstance(names, RObject) else items
    if obj.type == LISTSXP:
        return {k: to_python(v) for k, v in _pairlist_dict(obj).items()}
    return obj
