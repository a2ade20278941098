"""Checked access to the values of a decoded fio JSON document: a number where a number belongs, an
object where an object belongs, else a ParseError naming the field and line."""

from __future__ import annotations

from typing import Any

from ..base import ParseError

_NUMERIC = frozenset((int, float, type(None)))  # bool is not a number here (type(True) is bool)


def num(obj: dict, key: str, where: int, scale: float = 1.0) -> float | None:
    """A numeric field (None when missing or nan); anything else is a ParseError."""
    return number(obj.get(key), key, where, scale)


def number(value: Any, key: str, where: int, scale: float = 1.0) -> float | None:
    """The value of field ``key`` as a number times ``scale`` (see num)."""
    if type(value) is int or type(value) is float:
        return value * scale
    if value is None:
        return None
    raise ParseError(f"field {key!r} is not a number: {value!r}", line=where, kind="invalid", expected="a number")


def int_field(obj: dict, key: str, where: int) -> int | None:
    value = obj.get(key)
    if type(value) is int:
        return value
    value = number(value, key, where)
    if value is not None and not float(value).is_integer():  # reliability-36: "groupid": 1.5 was stored as 1, and NaN
        raise ParseError(  # (ValueError) or 1e400 was a parser-bug
            f"field {key!r} is not a whole number: {value!r}", line=where, kind="invalid", expected="an integer"
        )
    return None if value is None else int(value)


def whole(value: Any, key: str, where: int) -> int | None:
    """A count fio prints with %llu/%d (total_ios, ctx, a sample count) as an int; a fraction is a ParseError
    (reliability-37: `"total_ios": 1.5` was stored as 1, `0.5` as 0, as int_field's groupid was before r36)."""
    if value is None or type(value) is int:
        return value
    if not float(value).is_integer():
        raise ParseError(
            f"field {key!r} is not a whole number: {value!r}", line=where, kind="invalid", expected="an integer"
        )
    return int(value)


def nums(obj: dict, keys: tuple[str, ...], where: int) -> list:
    """The values of ``keys`` (None where missing), checked in one pass to be numbers or None."""
    values = [obj.get(k) for k in keys]
    if not _NUMERIC.issuperset(map(type, values)):
        for k, v in zip(keys, values, strict=True):
            number(v, k, where)  # raises for the first that is not a number
    return values


def check_numbers(d: dict, where: int) -> list:
    """The values of a dict of numbers (iodepths, percentiles, buckets), checked in one pass."""
    values = list(d.values())
    if not _NUMERIC.issuperset(map(type, values)):
        for k, v in d.items():
            number(v, k, where)
    return values


def object_field(obj: dict, key: str, where: int) -> dict:
    value = obj.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise ParseError(f"field {key!r} is not an object", line=where, kind="invalid", expected="a JSON object")
    return value


def scaled(values: list, scale: float) -> list:
    """Numbers (None for nan) times ``scale``, as floats; None stays None."""
    if None in values:
        return [None if v is None else v * scale for v in values]
    return list(map(scale.__mul__, values))


def is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


INTS = frozenset((int,))
