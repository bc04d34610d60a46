"""Typed readers for environment variables that fail loudly on bad values.

Every setting of kubegap-web comes from the environment. A typo in a value must
stop the process with a message naming the variable, never fall back silently.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str, environ: Mapping[str, str] = os.environ) -> str:
    return environ.get(name, default)


def envbool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use one of 1, 0, true, false, yes, no, on, off.")


def envint(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}.")
    return value


def envlist(name: str, default: list[str], environ: Mapping[str, str] = os.environ) -> list[str]:
    """A comma-separated list; blank items are dropped."""
    raw = environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]
