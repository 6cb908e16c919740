"""Configuration problems as one line each: pydantic's errors and TOML syntax errors translated.

Every problem names the key path and why (``boards[2].port: duplicate port
"/dev/ttyACM0" (also board 1)``); array positions count from 1 in file order.
:func:`load_toml` is the one reader of TOML files: a file that cannot be read, is not
UTF-8 or not TOML raises :class:`ConfigError` with one line.

Exceptions::

    ConfigError    the file is missing, unreadable, not TOML or not valid
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

__all__ = [
    "ConfigError",
    "describe_error",
    "describe_validation",
    "load_toml",
    "parse_toml",
    "shown",
]

_TOML_POSITION = re.compile(
    r"^(?P<msg>.*) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)$"
)


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


def shown(value: object) -> str:
    """A TOML value the way the user wrote it, for error lines."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


_REASONS: dict[str, Callable[[ErrorDetails], str]] = {
    "missing": lambda e: "required",
    "int_type": lambda e: f"must be a whole number, got {shown(e['input'])}",
    "string_type": lambda e: f"must be text in quotes, got {shown(e['input'])}",
    "bool_type": lambda e: f"must be true or false, got {shown(e['input'])}",
    "string_too_short": lambda e: "must not be empty",
    "greater_than_equal": lambda e: f"must be at least {_ctx(e, 'ge')}, got {shown(e['input'])}",
    "less_than_equal": lambda e: f"must be at most {_ctx(e, 'le')}, got {shown(e['input'])}",
    "greater_than": lambda e: f"must be more than {_ctx(e, 'gt')}, got {shown(e['input'])}",
    "literal_error": lambda e: (
        f"must be {str(_ctx(e, 'expected')).replace(chr(39), chr(34))}, got {shown(e['input'])}"
    ),
    "value_error": lambda e: str(_ctx(e, "error")),
    "list_type": lambda e: f"must be an array of tables, got {shown(e['input'])}",
    "model_type": lambda e: f"must be a table, got {shown(e['input'])}",
}


def _ctx(error: ErrorDetails, key: str) -> object:
    return error.get("ctx", {}).get(key)


def _key_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part + 1}]" if isinstance(part, int) else f".{part}" if path else part
    return path


def _known_keys(loc: tuple[int | str, ...], root: type[BaseModel]) -> list[str]:
    """The keys the table at ``loc`` accepts (for "did you mean")."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, str) and model is not None:
            field = model.model_fields.get(part)
            model = None if field is None else _model_in(field.annotation)
    return [] if model is None else list(model.model_fields)


def _model_in(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        model = _model_in(arg)
        if model is not None:
            return model
    return None


def describe_error(error: ErrorDetails, root: type[BaseModel]) -> str:
    """One pydantic error as ``key.path: why``, ``root`` being the model of the whole file."""
    loc = error["loc"]
    if error["type"] == "extra_forbidden":
        known = _known_keys(loc[:-1], root)
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.75)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f"{_key_path(loc)}: unknown key{hint}"
    describe = _REASONS.get(error["type"])
    reason = error["msg"] if describe is None else describe(error)
    return f"{_key_path(loc)}: {reason}"


def describe_validation(source: str, exc: ValidationError, root: type[BaseModel]) -> ConfigError:
    """Every error of a validation of the file ``source`` against ``root``, one line each."""
    return ConfigError([f"{source}: {describe_error(error, root)}" for error in exc.errors()])


def load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and parse a TOML file.

    Raises:
        ConfigError: one line: unreadable, not UTF-8, or a TOML syntax error (with where).
    """
    source = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError([f"{source}: cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{source}: not UTF-8 text"]) from None
    return parse_toml(text, source)


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML text read from ``source``.

    Raises:
        ConfigError: one line naming the line and column of the syntax error.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_describe_toml_error(source, text, exc)]) from None
    except RecursionError:
        raise ConfigError(
            [f"{source}: TOML arrays or inline tables nested too deeply to read"]
        ) from None


def _describe_toml_error(source: str, text: str, exc: tomllib.TOMLDecodeError) -> str:
    match = _TOML_POSITION.match(str(exc))
    if match is None:
        return f"{source}: TOML syntax error: {exc}"
    if match.group("line") is None:
        where = f"line {text.count(chr(10)) + 1} (end of file)"
    else:
        where = f"line {match.group('line')}, column {match.group('col')}"
    return f"{source}: {where}: TOML syntax error: {match.group('msg')}"
