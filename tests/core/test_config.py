"""Configs: docs, strict typed overrides, hashing, JSON round trip, seed lists."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import pytest

from icml24.core.config import apply_overrides, config_hash, from_dict, knob, parse_seeds, to_dict
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Cfg:
    lr: float = knob(0.1, "learning rate")
    steps: int = knob(10, "steps")
    flag: bool = knob(False, "a switch")
    name: str = knob("a", "a name")
    gate: Literal["tanh", "sigmoid"] = knob("tanh", "activation")
    sizes: tuple[int, ...] = knob((1, 2), "sizes")
    pair: tuple[float, float] = knob((0.5, 1.5), "a pair")
    limit: float | None = knob(None, "optional limit")


def test_overrides_parse_each_type():
    c = apply_overrides(Cfg(), ["lr=3e-4", "steps=20", "flag=true", "name=b", "gate=sigmoid",
                                "sizes=[4, 8]", "pair=1,2", "limit=0.5"])
    assert c == Cfg(lr=3e-4, steps=20, flag=True, name="b", gate="sigmoid", sizes=(4, 8), pair=(1.0, 2.0),
                    limit=0.5)
    assert apply_overrides(c, ["limit=none"]).limit is None
    assert apply_overrides(Cfg(), ["steps=1e3"]).steps == 1000


@pytest.mark.parametrize("bad, words", [
    ("nope=1", "unknown config key 'nope'"),
    ("steps=1.5", "not an integer"),
    ("lr=fast", "not a number"),
    ("flag=maybe", "not a boolean"),
    ("gate=relu", "not one of tanh, sigmoid"),
    ("sizes=1,x", "not an integer"),
    ("pair=1,2,3", "expected 2"),
    ("steps", "key=value"),
])
def test_bad_overrides_are_user_errors(bad, words):
    with pytest.raises(UserError, match=words):
        apply_overrides(Cfg(), [bad])


def test_hash_and_json_round_trip():
    c = apply_overrides(Cfg(), ["sizes=3,4,5"])
    assert from_dict(Cfg, to_dict(c)) == c
    assert config_hash(c) == config_hash(from_dict(Cfg, to_dict(c)))
    assert config_hash(c) != config_hash(Cfg())
    with pytest.raises(UserError, match="unknown config key"):
        from_dict(Cfg, {"zzz": 1})


def test_knob_rejects_mutable_default():
    with pytest.raises(TypeError):
        knob([1, 2], "a list")


@pytest.mark.parametrize("spec, seeds", [("0-4", (0, 1, 2, 3, 4)), ("0,3,7", (0, 3, 7)),
                                         ("7,0-1", (0, 1, 7)), ("5", (5,))])
def test_seed_lists(spec, seeds):
    assert parse_seeds(spec) == seeds


@pytest.mark.parametrize("spec", ["4-0", "a", "-1", "1,,2", "0-2,2", "", "1-b"])
def test_bad_seed_lists(spec):
    with pytest.raises(UserError):
        parse_seeds(spec)


def test_check_paths_accepts_a_path_of_the_right_kind_and_names_the_wrong_one(tmp_path):

    from icml24.core.config import check_paths, path_knob

    @dataclass(frozen=True)
    class C:
        folder: str = path_knob("", "a folder", "dir")
        table: str = path_knob("", "a file", "file")
        either: str = path_knob("", "either", "any")

    (tmp_path / "d").mkdir()
    (tmp_path / "f.csv").write_text("a,b\n")
    os.mkfifo(tmp_path / "pipe")
    d, f = str(tmp_path / "d"), str(tmp_path / "f.csv")
    check_paths(C(folder=d, table=f, either=d))  # the right kinds: accepted
    check_paths(C(either=f))
    for config, words in [(C(folder=f), "is a file, not a directory"), (C(table=d), "is a directory, not a file"),
                          (C(either=str(tmp_path / "pipe")), "not a regular file or directory"),
                          (C(folder=str(tmp_path / "none")), "no such directory")]:
        with pytest.raises(UserError, match=words):
            check_paths(config)


def test_a_seed_range_is_counted_against_the_limit_before_it_is_expanded():
    assert len(parse_seeds("0-1500", limit=2000)) == 1501  # --max-units raised: accepted
    with pytest.raises(UserError, match="1,501 seeds, more than --max-units 1000"):
        parse_seeds("0-1500", limit=1000)
    with pytest.raises(UserError, match="more than --max-units 10"):
        parse_seeds("0-5,7-11", limit=10)
