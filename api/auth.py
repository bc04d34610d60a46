"""Bearer-token authentication and the JSON error shape of every API endpoint."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse

from api.tokens import api_token_user

View = Callable[[HttpRequest, User], HttpResponse]

# Not a secret: where to get a token, for the 401 message.
TOKEN_ADVICE = "create one in the admin (API tokens) or with: python manage.py api_token --user NAME"  # noqa: S105


class ApiError(Exception):
    """An error the client can fix, answered as JSON with its HTTP status."""

    def __init__(self, status: int, code: str, message: str, parameter: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.parameter = status, code, message, parameter

    def response(self) -> JsonResponse:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.parameter is not None:
            error["parameter"] = self.parameter
        response = JsonResponse({"error": error}, status=self.status)
        if self.status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="kubegap"'
        return response


def bad_parameter(parameter: str, message: str) -> ApiError:
    return ApiError(400, "bad_parameter", message, parameter)


def bearer_user(request: HttpRequest) -> User:
    """The user of the request's bearer token, or a 401 that says what is wrong."""
    header = request.headers.get("Authorization", "")
    if not header:
        raise ApiError(
            401,
            "unauthorized",
            f"Missing Authorization header: send 'Authorization: Bearer <token>'; {TOKEN_ADVICE}.",
        )
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "The Authorization header must be 'Bearer <token>'.")
    user = api_token_user(token.strip())
    if user is None:
        raise ApiError(401, "unauthorized", "The token is not valid: unknown, revoked, or its user is inactive.")
    return user


def api_endpoint(*, parameters: Iterable[str] = ()) -> Callable[[View], Callable[..., HttpResponse]]:
    """Wrap a read-only endpoint: GET only, bearer token, known query parameters, JSON errors."""
    allowed = frozenset(parameters)

    def wrap(view: View) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def endpoint(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                if request.method not in ("GET", "HEAD"):
                    raise ApiError(405, "method_not_allowed", "The API is read-only: only GET is allowed.")
                user = bearer_user(request)
                unknown = sorted(set(request.GET) - allowed)
                if unknown:
                    known = ", ".join(sorted(allowed)) or "none"
                    raise bad_parameter(
                        unknown[0], f"Unknown query parameter {unknown[0]!r}; this endpoint takes: {known}."
                    )
                return view(request, user, *args, **kwargs)
            except ApiError as exc:
                response = exc.response()
                if exc.status == 405:
                    response["Allow"] = "GET, HEAD"
                return response

        # What the endpoint accepts, for the test that holds the OpenAPI description to it.
        endpoint.parameters = allowed  # type: ignore[attr-defined]
        return endpoint

    return wrap
