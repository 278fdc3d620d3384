"""Typed, frozen experiment configs with a docstring per field, strict overrides and stable hashes.

A paper's config is a frozen dataclass whose fields are declared with :func:`knob`, which stores the
field's documentation next to its default::

    @dataclass(frozen=True)
    class Config:
        n_values: tuple[int, ...] = knob((100, 1000), "sample sizes n at which the error is measured")
        lr: float = knob(1e-3, "Adam learning rate")

Overrides come from the command line as ``key=value`` strings and are parsed against the field's
declared type (int, float, bool, str, Literal, tuple[...] of those); anything else is a
:class:`~icml24.core.errors.UserError`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import stat
import typing
from typing import Any, Literal, get_args, get_origin

from icml24.core.errors import UserError, from_os_error

DOC = "doc"
PATH = "path"  # metadata key of data-path knobs: "file", "dir" or "any"
AUTO = "auto"  # a data-path knob's value meaning "look in the paper's known places, skip if absent"


RULES = "rules"  # metadata key of a knob's value rules (see :func:`knob`)
MAX_INT = 10**9
"""Largest integer a knob without its own upper bound accepts (a count of steps, units or samples; beyond it
the run would exhaust memory or never end, so it is refused before anything runs)."""


def knob(default: Any, doc: str, *, ge: float | None = None, gt: float | None = None, le: float | None = None,
         lt: float | None = None, choices: tuple | None = None, nonempty: bool = False, finite: bool = True) -> Any:
    """A dataclass field with a default value, a one-line documentation string and its valid values.

    Where the type cannot say what is valid, the knob does: ``ge``/``gt``/``le``/``lt`` bound a number
    (every element of a tuple of numbers), ``choices`` lists the allowed strings (every element of a
    tuple of strings), ``nonempty`` rejects '' and (); a float must be finite unless ``finite=False``; an
    integer above :data:`MAX_INT` is refused unless ``le``/``lt`` bounds it.
    :func:`check_knobs` enforces them (the CLI, before anything runs; the contract test, on the presets).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     lr: float = knob(0.1, "learning rate", gt=0)
    >>> field_docs(C)
    {'lr': 'learning rate'}
    >>> check_knobs(C(lr=-1.0))
    Traceback (most recent call last):
    ...
    icml24.core.errors.UserError: lr=-1.0: must be > 0
    """
    if isinstance(default, list):
        raise TypeError("use a tuple, not a list, as a config default (configs are frozen and hashable)")
    rules = {k: v for k, v in dict(ge=ge, gt=gt, le=le, lt=lt, choices=choices).items() if v is not None}
    rules.update(nonempty=nonempty, finite=finite)
    return dataclasses.field(default=default, metadata={DOC: doc, RULES: rules})


def _violation(value: Any, rules: dict[str, Any]) -> str | None:
    """Why ``value`` breaks ``rules`` (None if it does not); tuples are checked element by element."""
    if rules.get("nonempty") and (value == "" or value == ()):
        return "must not be empty"
    if isinstance(value, tuple):
        for v in value:
            why = _violation(v, {**rules, "nonempty": False})
            if why is not None:
                return f"every element {why}" if not why.startswith("every") else why
        return None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and rules.get("finite", True) and not math.isfinite(value):
        return "must be a finite number"
    if isinstance(value, int) and abs(value) > MAX_INT and rules.get("le") is None and rules.get("lt") is None:
        return f"must be at most {MAX_INT:.0e} in size: no run of that size fits one machine"
    if isinstance(value, (int, float)):
        for key, op, text in (("ge", lambda a, b: a >= b, ">="), ("gt", lambda a, b: a > b, ">"),
                              ("le", lambda a, b: a <= b, "<="), ("lt", lambda a, b: a < b, "<")):
            bound = rules.get(key)
            if bound is not None and not op(value, bound):
                return f"must be {text} {bound:g}"
    if isinstance(value, str) and rules.get("choices") is not None and value not in rules["choices"]:
        return f"must be one of {', '.join(map(str, rules['choices']))}"
    return None


def check_knobs(config: Any) -> None:
    """A one-line :class:`UserError` for the first field whose value breaks its knob's rules."""
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        rules = dict(f.metadata.get(RULES, {"finite": True}))
        why = _violation(value, rules)
        if why is not None:
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
            raise UserError(f"{f.name}={shown}: {why}")


def path_knob(default: str, doc: str, kind: Literal["file", "dir", "any"] = "any") -> Any:
    """A string knob naming a data path the user supplies; '' means "not given", :data:`AUTO` that the
    paper resolves it itself: a copy shipped with the package (brf's ECG files), or the places where a
    Debian package installs the data, skipping what needs it when nothing is there (ranking_bandit).

    :func:`check_paths` (called by the CLI before anything runs or is written) requires a given path
    to exist and be a ``kind`` ("file", "dir", or "any" of the two).
    """
    if kind not in ("file", "dir", "any"):
        raise TypeError(f"path kind must be file, dir or any, not {kind!r}")
    return dataclasses.field(default=default, metadata={DOC: doc, PATH: kind})


def check_paths(config: Any) -> None:
    """A one-line :class:`UserError` for the first data-path knob that names a missing path.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     data: str = path_knob("", "ratings file", "file")
    >>> check_paths(C())  # not given: fine
    >>> check_paths(C(data="auto"))  # the paper's known places: resolved by the paper
    >>> check_paths(C(data="/nonexistent/x.csv"))
    Traceback (most recent call last):
    ...
    icml24.core.errors.UserError: data=/nonexistent/x.csv: no such file
    """
    from pathlib import Path

    for f in dataclasses.fields(config):
        kind = f.metadata.get(PATH)
        value = getattr(config, f.name)
        if kind is None or not value or value == AUTO:
            continue
        shown = show_path(value)
        path = Path(value).expanduser()
        what = {"file": "file", "dir": "directory", "any": "file or directory"}[kind]
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise UserError(f"{f.name}={shown}: no such {what}") from None
        except OSError as exc:  # a folder on the way without permission, a name too long, a loop
            raise UserError(f"{f.name}={shown}: cannot be read ({exc.strerror or exc})") from None
        found = "directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None
        if found is None:
            raise UserError(f"{f.name}={shown}: not a regular file or directory (a pipe, socket or device)")
        if kind != "any" and found != what:
            raise UserError(f"{f.name}={shown}: is a {found}, not a {what}")
        if not os.access(path, os.R_OK | (os.X_OK if found == "directory" else 0)):
            raise UserError(f"{f.name}={shown}: cannot be read (permission denied)")


def show_path(value: str) -> str:
    """``value`` as it can be shown on one line: control characters (a newline in a name) escaped.

    >>> show_path("data/x.csv"), show_path("a\\nb")
    ('data/x.csv', "'a\\\\nb'")
    """
    return repr(value) if any(not ch.isprintable() for ch in value) else value


def valid_values(config_type: type) -> dict[str, str]:
    """Field name -> its valid values in words, from the knob's rules and type ('' where nothing is declared).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     lr: float = knob(0.1, "learning rate", gt=0, le=1)
    ...     gate: str = knob("relu", "gate", choices=("relu", "tanh"))
    ...     data: str = path_knob("", "ratings file", "file")
    >>> valid_values(C)
    {'lr': '> 0, <= 1, finite', 'gate': 'one of relu, tanh', 'data': "a file ('' = none)"}
    """
    hints = typing.get_type_hints(config_type)
    out = {}
    for f in dataclasses.fields(config_type):
        rules = f.metadata.get(RULES, {})
        words = [f"{text} {rules[key]:g}" for key, text in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
                 if rules.get(key) is not None]
        if rules.get("choices") is not None:
            words.append("one of " + ", ".join(map(str, rules["choices"])))
        if rules.get("nonempty"):
            words.append("not empty")
        tp = hints[f.name]
        if get_origin(tp) is Literal and rules.get("choices") is None:  # choices, when given, say it already
            words.append("one of " + ", ".join(map(str, get_args(tp))))
        if tp is float or (get_origin(tp) is tuple and float in get_args(tp)):
            if rules.get("finite", True):
                words.append("finite")
        if tp is int and rules.get("le") is None and rules.get("lt") is None:
            words.append(f"<= {MAX_INT:.0e}")
        if f.metadata.get(PATH):
            kind = {"file": "a file", "dir": "a folder", "any": "a file or folder"}[f.metadata[PATH]]
            words.append(f"{kind} ('' = none)")
        out[f.name] = ", ".join(words)
    return out


def field_docs(config_type: type) -> dict[str, str]:
    """Field name -> documentation string ('' where a field has none)."""
    return {f.name: f.metadata.get(DOC, "") for f in dataclasses.fields(config_type)}


def to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of the config's fields (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def config_hash(config: Any) -> str:
    """A short, stable hash of the config's type name and values: the run store's unit key.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     a: int = knob(1, "a")
    >>> config_hash(C()) == config_hash(C(a=1)) != config_hash(C(a=2))
    True
    """
    payload = json.dumps({"type": type(config).__name__, "fields": to_dict(config)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def from_dict(config_type: type, values: dict[str, Any]) -> Any:
    """Rebuild a config from :func:`to_dict` output (lists back to tuples); unknown keys are errors."""
    hints = typing.get_type_hints(config_type)
    known = {f.name for f in dataclasses.fields(config_type)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise UserError(f"unknown config key(s) for {config_type.__name__}: {', '.join(unknown)}")
    return config_type(**{k: _coerce_json(v, hints[k]) for k, v in values.items()})


def _coerce_json(value: Any, tp: Any) -> Any:
    if get_origin(tp) is tuple and isinstance(value, list):
        args = get_args(tp)
        inner = args[0] if args else Any
        return tuple(_coerce_json(v, inner) for v in value)
    return value


def apply_overrides(config: Any, assignments: typing.Iterable[str]) -> Any:
    """Return a copy of ``config`` with ``key=value`` assignments applied, each checked against its type.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     lr: float = knob(0.1, "learning rate")
    ...     ns: tuple[int, ...] = knob((1, 2), "sizes")
    >>> apply_overrides(C(), ["lr=1e-2", "ns=4,8,16"])
    C(lr=0.01, ns=(4, 8, 16))
    """
    hints = typing.get_type_hints(type(config))
    names = {f.name for f in dataclasses.fields(config)}
    changes: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f"override {item!r} is not of the form key=value")
        if key not in names:
            close = ", ".join(sorted(names))
            raise UserError(f"unknown config key {key!r} for {type(config).__name__} (known: {close})")
        try:
            changes[key] = parse_value(raw.strip(), hints[key])
        except ValueError as exc:
            raise UserError(f"bad value for {key}: {exc}") from None
    try:
        return dataclasses.replace(config, **changes)
    except OSError as exc:  # a config's own checks that look at a path (a folder without permission)
        raise from_os_error(exc, knob_of_path({**dataclasses.asdict(config), **changes}, exc)) from None


def knob_of_path(values: dict[str, Any], exc: OSError) -> str:
    """The knob whose value the path of ``exc`` is or lies under ('' if none)."""
    name = str(exc.filename or "")
    return next((k for k, v in values.items() if isinstance(v, str) and v and name.startswith(v)), "")


def parse_value(raw: str, tp: Any) -> Any:
    """Parse one command-line value as type ``tp``; raises ValueError with a readable message."""
    origin = get_origin(tp)
    if origin is Literal:
        choices = get_args(tp)
        for choice in choices:
            if str(choice) == raw:
                return choice
        raise ValueError(f"{raw!r} is not one of {', '.join(map(str, choices))}")
    if origin is tuple:
        args: typing.Sequence[Any] = get_args(tp)
        inner = args[0] if args else str
        text = raw.strip()
        pairs = {"[": "]", "(": ")"}
        if text[:1] in pairs or text[-1:] in pairs.values():
            if text[:1] not in pairs or text[-1:] != pairs[text[:1]]:
                raise ValueError(f"{raw!r}: unbalanced brackets (write a,b,c or [a,b,c])")
            text = text[1:-1].strip()
        parts = [p.strip() for p in text.split(",")] if text else []
        if "" in parts:
            raise ValueError(f"{raw!r}: an empty item between commas")
        if len(args) == 2 and args[1] is Ellipsis or not args:
            return tuple(parse_value(p, inner) for p in parts)
        if len(parts) != len(args):
            raise ValueError(f"expected {len(args)} comma-separated values, got {len(parts)}")
        return tuple(parse_value(p, a) for p, a in zip(parts, args))
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        args = [a for a in get_args(tp) if a is not type(None)]
        if raw.lower() in ("none", "null") and len(args) < len(get_args(tp)):
            return None
        errors = []
        for a in args:
            try:
                return parse_value(raw, a)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if tp is bool:
        low = raw.lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{raw!r} is not a boolean (true/false)")
    if tp is int:
        try:
            return int(raw)
        except ValueError:
            try:
                as_float = float(raw)
            except ValueError:
                raise ValueError(f"{raw!r} is not an integer") from None
            if as_float.is_integer():
                return int(as_float)
            raise ValueError(f"{raw!r} is not an integer") from None
    if tp is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    if tp is str:
        return raw
    raise ValueError(f"fields of type {tp} cannot be set from the command line")


MAX_SEED_LIST = 1_000_000
"""Most seeds a seed list may expand to (the unit limit, ``--max-units``, is checked after parsing)."""


def parse_seeds(spec: str, limit: int | None = None) -> tuple[int, ...]:
    """Parse a seed list: ``"0-4"``, ``"0,3,7"`` or a mix (``"0-2,9"``); sorted, no duplicates. More than
    ``limit`` seeds (the command's ``--max-units``) is refused before a range is expanded.

    >>> parse_seeds("0-2,9")
    (0, 1, 2, 9)
    >>> parse_seeds("0-99999999999", limit=1000)
    Traceback (most recent call last):
    ...
    icml24.core.errors.UserError: --seeds 0-99999999999: 100,000,000,000 seeds, more than --max-units 1000; raise it to mean it
    """
    seeds: list[int] = []
    for part in spec.split(","):
        if len(seeds) > MAX_SEED_LIST:
            raise UserError(f"bad seed list {spec!r}: more than {MAX_SEED_LIST:,} seeds")
        part = part.strip()
        if not part:
            raise UserError(f"bad seed list {spec!r}: empty item")
        lo, dash, hi = part.partition("-")
        try:
            if dash:
                a, b = int(lo), int(hi)
                if b < a:
                    raise UserError(f"bad seed range {part!r}: end is before start")
                if limit is not None and len(seeds) + b - a + 1 > limit:
                    raise UserError(f"--seeds {spec}: {len(seeds) + b - a + 1:,} seeds, more than --max-units {limit}; "
                                    "raise it to mean it")
                if b - a >= MAX_SEED_LIST:
                    raise UserError(f"bad seed range {part!r}: more than {MAX_SEED_LIST:,} seeds")
                seeds.extend(range(a, b + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise UserError(f"bad seed list {spec!r}: use non-negative integers like 0-4 or 0,3,7") from None
    if len(set(seeds)) != len(seeds):
        raise UserError(f"bad seed list {spec!r}: a seed appears twice")
    return tuple(sorted(seeds))
