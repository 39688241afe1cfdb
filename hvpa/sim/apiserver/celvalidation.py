"""x-kubernetes-validations: a CRD's CEL rules, evaluated when cel-python is installed.

The real server evaluates every rule of the schema node a value sits at,
with `self` bound to the value (and `oldSelf` to the old one on updates),
and reports a failure at that node's path (plus the rule's `fieldPath`),
with the rule's `reason` (FieldValueInvalid unless it says otherwise) and
its `message`, its `messageExpression`'s value, or "failed rule: RULE".
Parts of the object equal to the old object's are not evaluated again
(ratcheting), and a rule with `oldSelf` runs only on updates.

cel-python is a development dependency (the CRD's own tests evaluate the
rules with it), not a runtime one: without it no rule is evaluated, and an
object a rule would refuse is accepted. It is not the server's CEL (cel-go
with Kubernetes' function libraries): a rule it cannot compile or evaluate
is skipped rather than failed, so the in-repo server never refuses what
the real one accepts because of a missing function. One function of the
strings library that hvpa's CRD uses in its messages, `format`, is given to
cel-python here (`string_format`), for the verbs those messages use.
"""

from __future__ import annotations

import logging
import os
import re
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Final

from hvpa.sim.apiserver.errors import OMIT, FieldError
from hvpa.sim.apiserver.structural import MISSING, Rule, Schema, list_map_key

__all__ = ["cel_available", "cel_errors", "string_format"]

logger = logging.getLogger(__name__)

_DEFAULT_REASON: Final = "FieldValueInvalid"
_REASONS: Final = frozenset(
    {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
)


_FORMAT_VERB: Final = re.compile(r"%[ds]")


def _parser_cache_dir() -> Path | None:
    """Where lark keeps cel-python's analysed grammar between processes (_build_parser):
    the user's cache directory, not a shared temporary one, since lark loads the file with
    pickle. None where there is no home to put it in (a container without HOME or a passwd
    entry): the parser is then built as without a cache, and nothing fails for it."""
    configured = os.environ.get("XDG_CACHE_HOME")
    if configured:
        return Path(configured) / "hvpa"
    try:
        return Path.home() / ".cache" / "hvpa"
    except (RuntimeError, KeyError, OSError):
        return None


def string_format(template: Any, values: Any) -> Any:
    """cel-go's `string.format(list)` for `%d` (an int) and `%s`; anything else raises, so
    the message is left out as for any expression cel-python cannot evaluate."""
    celtypes = _celpy().celtypes
    arguments = iter(values)

    def one(verb: re.Match[str]) -> str:
        value = next(arguments)
        if verb.group() == "%d":
            if not isinstance(value, celtypes.IntType):
                raise TypeError(f"%d of {type(value).__name__}")
            return str(int(value))
        return str(value)

    if "%" in _FORMAT_VERB.sub("", str(template)):
        raise ValueError(f"a format verb other than %d and %s in {template!r}")
    return celtypes.StringType(_FORMAT_VERB.sub(one, str(template)))


@lru_cache(maxsize=1)
def _celpy() -> Any:
    """cel-python, imported on first use (a fifth of a second), or None when not installed."""
    try:
        import celpy
    except ImportError:
        return None
    _build_parser(celpy)
    return celpy


def _build_parser(celpy: Any) -> None:
    """cel-python's parser, built with lark's cache in _parser_cache_dir().

    cel-python builds one lark LALR parser per process, on the first compile: about a
    second of grammar analysis, paid again by every test worker and every `hvpa sim` and
    `hvpa run` process. lark can keep that analysis in a file (`cache=`), which cel-python
    does not ask for; building the parser here with cel-python's own call and options, plus
    the cache, makes later processes load it in a tenth of the time. lark stores a hash of
    the grammar, its options and its own version in the file and rebuilds on a mismatch or
    a file it cannot read, so a cache never changes what is parsed. Anything unexpected
    (another cel-python layout, an unwritable directory) leaves cel-python to build its
    parser itself, as before.
    """
    celparser: Any = getattr(celpy, "celparser", None)
    parser_class = getattr(celparser, "CELParser", None)
    lark = getattr(celparser, "Lark", None)
    if parser_class is None or lark is None or getattr(parser_class, "CEL_PARSER", 0) is not None:
        return
    directory = _parser_cache_dir()
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    celparser.Lark = partial(lark, cache=str(directory / "cel-parser.lark"))
    try:
        parser_class()
    except Exception as error:  # cel-python builds it itself on first use, as without this
        logger.debug("CEL parser not built", extra={"fields": {"error": str(error)}})
    finally:
        celparser.Lark = lark


def cel_available() -> bool:
    return _celpy() is not None


def cel_errors(
    schema: Schema, value: Any, old: Any = MISSING, *, path: str = ""
) -> list[FieldError]:
    """The failures of every rule under `schema` for `value` (`old`: an update's old object)."""
    if value is None or not schema.has_rules or _celpy() is None:
        return []
    found: list[FieldError] = []
    _walk(schema, value, old, path, found)
    return found


def _walk(schema: Schema, value: Any, old: Any, path: str, found: list[FieldError]) -> None:
    if not schema.has_rules or value is None:
        return
    if old is not MISSING and old == value and type(old) is type(value):
        return
    for rule in schema.rules:
        error = _check(rule, value, old, path)
        if error is not None:
            found.append(error)
    if isinstance(value, dict):
        olds = old if isinstance(old, dict) else {}
        for key, item in value.items():
            child = schema.child(key)
            if child is not None:
                where = f"{path}.{key}" if path else key
                _walk(child, item, olds.get(key, MISSING), where, found)
    elif isinstance(value, list) and schema.items is not None:
        olds_by_key = _old_items(schema, old)
        for index, item in enumerate(value):
            previous = MISSING
            if olds_by_key is not None and isinstance(item, dict):
                previous = olds_by_key.get(list_map_key(item, schema.map_keys), MISSING)
            _walk(schema.items, item, previous, f"{path}[{index}]", found)


def _old_items(schema: Schema, old: Any) -> dict[tuple[Any, ...], Any] | None:
    """Old items of a map list by key: the only list items ratcheting can correlate."""
    if schema.list_type != "map" or not isinstance(old, list):
        return None
    return {list_map_key(item, schema.map_keys): item for item in old if isinstance(item, dict)}


def _check(rule: Rule, value: Any, old: Any, path: str) -> FieldError | None:
    transition = "oldSelf" in rule.rule
    if transition and old is MISSING:
        return None
    celpy = _celpy()
    activation = {"self": celpy.json_to_cel(value)}
    if transition:
        activation["oldSelf"] = celpy.json_to_cel(old)
    result = _evaluate(rule.rule, activation)
    if result is not False:
        return None
    message = rule.message
    if rule.message_expression:
        expressed = _evaluate(rule.message_expression, activation)
        if isinstance(expressed, str) and expressed.strip():
            message = expressed
    if not message:
        message = f"failed rule: {rule.rule}"
    reason = rule.reason if rule.reason in _REASONS else _DEFAULT_REASON
    where = f"{path}{rule.field_path}" if rule.field_path else path
    return FieldError(where.lstrip(".") or "<nil>", reason, message, OMIT)


def _evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """The expression's value as a Python bool or str; None when cel-python cannot tell."""
    program = _program(expression)
    if program is None:
        return None
    try:
        result = program.evaluate(activation)
    except Exception as error:  # cel-python raises its own errors and plain ones alike
        logger.debug(
            "CEL rule not evaluated", extra={"fields": {"rule": expression, "error": str(error)}}
        )
        return None
    if isinstance(result, bool | _celpy().celtypes.BoolType):
        return bool(result)
    if isinstance(result, str):
        return str(result)
    return None


@lru_cache(maxsize=4096)
def _program(expression: str) -> Any:
    """A compiled program, shared by every server in the process (compiling is the slow part)."""
    environment = _celpy().Environment()
    try:
        return environment.program(
            environment.compile(expression), functions={"format": string_format}
        )
    except Exception as error:  # a parse error, or a function cel-python does not know
        logger.debug(
            "CEL rule not compiled", extra={"fields": {"rule": expression, "error": str(error)}}
        )
        return None
