"""Keyset pagination: a page of rows after an opaque cursor, and the link to the next page.

Keyset rather than offsets because findings tables grow to millions of rows:
each page is one indexed range scan, and rows added meanwhile never shift a
page or show up twice.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.utils.http import urlencode

from api.auth import bad_parameter

M = TypeVar("M", bound=Model)

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
PAGE_PARAMETERS = ("limit", "cursor")


def page_limit(request: HttpRequest) -> int:
    raw = request.GET.get("limit", str(DEFAULT_LIMIT))
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise bad_parameter("limit", f"limit must be a whole number from 1 to {MAX_LIMIT}; got {raw!r}.")
    return int(raw)


def encode_cursor(key: int | str) -> str:
    return base64.urlsafe_b64encode(json.dumps([key]).encode()).decode().rstrip("=")


def decode_cursor(raw: str, key_type: type) -> Any:
    try:
        [key] = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (ValueError, binascii.Error, TypeError):
        key = None
    if not isinstance(key, key_type) or isinstance(key, bool):
        raise bad_parameter("cursor", "cursor is not one this endpoint issued; follow the 'next' link as given.")
    return key


def paginate(
    request: HttpRequest,
    rows: QuerySet[M],
    serialize: Callable[[list[M]], list[dict[str, Any]]],
    *,
    key: str = "pk",
    key_type: type = int,
    descending: bool = False,
) -> dict[str, Any]:
    """One page of `rows` ordered by `key`, as {"results": [...], "next": url-or-null}."""
    limit = page_limit(request)
    ordered = rows.order_by(f"-{key}" if descending else key)
    if cursor := request.GET.get("cursor"):
        after = decode_cursor(cursor, key_type)
        ordered = ordered.filter(**{f"{key}__lt" if descending else f"{key}__gt": after})
    page = list(ordered[: limit + 1])
    next_url = None
    if len(page) > limit:
        page = page[:limit]
        params = {**request.GET.dict(), "cursor": encode_cursor(getattr(page[-1], key))}
        next_url = request.build_absolute_uri(f"{request.path}?{urlencode(params)}")
    return {"results": serialize(page), "next": next_url}
