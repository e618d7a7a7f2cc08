"""The one HTTP rendering of errors: every failure is ``{"code", "message"}`` with a stable
code and its status. No stack traces ever reach a client."""

from __future__ import annotations

import logging
from typing import Any, Final

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response

from storage.errors import ErrorCode, KanbanError

logger = logging.getLogger(__name__)

HTTP_STATUS: Final[dict[ErrorCode, int]] = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.UNKNOWN_ALIAS: 404,
    ErrorCode.CONFLICT: 409,
    ErrorCode.RELATIONSHIP_PENDING: 409,
    ErrorCode.TOO_LARGE: 413,
    # A quota is no body size (413) and no server failure (5xx, which clients retry and
    # monitors count); waiting changes nothing (429). The board's own state, which its people
    # can change (delete values, purge kept versions, leave a board), conflicts with it.
    ErrorCode.QUOTA_EXCEEDED: 409,
    ErrorCode.LIMIT_REACHED: 409,
    # Well formed, refused by what the thing is (the built-in default configuration).
    ErrorCode.BUILT_IN: 409,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.NOT_SUPPORTED: 422,
}


def error_response(error: KanbanError) -> Response:
    response = Response(error.as_dict(), status=HTTP_STATUS[error.code])
    if error.code == ErrorCode.UNAUTHENTICATED:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def _translate(exc: Exception) -> KanbanError | None:
    """Map framework exceptions onto our codes."""
    if isinstance(exc, KanbanError):
        return exc
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return KanbanError(ErrorCode.UNAUTHENTICATED, str(exc.detail))
    if isinstance(exc, exceptions.PermissionDenied | PermissionDenied):
        return KanbanError(ErrorCode.FORBIDDEN, "you may not do this")
    if isinstance(exc, exceptions.NotFound | Http404):
        return KanbanError(ErrorCode.NOT_FOUND, "not found")
    if isinstance(exc, exceptions.Throttled):
        return KanbanError(
            ErrorCode.RATE_LIMITED,
            "too many requests",
            retryAfter=int(getattr(exc, "wait", 0) or 0),
        )
    if isinstance(exc, RequestDataTooBig):
        return KanbanError(ErrorCode.TOO_LARGE, "request body is too large")
    if isinstance(exc, exceptions.ParseError | exceptions.UnsupportedMediaType):
        return KanbanError(ErrorCode.INVALID_ARGUMENT, str(exc.detail))
    if isinstance(exc, exceptions.MethodNotAllowed):
        return KanbanError(ErrorCode.INVALID_ARGUMENT, str(exc.detail))
    if isinstance(exc, exceptions.ValidationError):
        return KanbanError(ErrorCode.INVALID_ARGUMENT, "invalid request", errors=exc.detail)
    if isinstance(exc, exceptions.APIException):
        return KanbanError(ErrorCode.INVALID_ARGUMENT, str(exc.detail))
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    error = _translate(exc)
    if error is None:
        logger.exception("unhandled API error", exc_info=exc)
        error = KanbanError(ErrorCode.UNAVAILABLE, "the server could not complete the request")
    response = error_response(error)
    if isinstance(exc, exceptions.MethodNotAllowed):
        response.status_code = 405
    return response


@csrf_exempt
def api_path_not_found(request: HttpRequest, unmatched: str = "") -> HttpResponse:
    """Any path under the API that no endpoint has: the JSON error shape, never Django's
    HTML page. A path that only lacks its trailing slash still redirects to it, as
    CommonMiddleware's APPEND_SLASH would (this catch-all leaves it nothing to do)."""
    if not request.path_info.endswith("/"):
        try:
            match = resolve(request.path_info + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_path_not_found:
            return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    error = KanbanError(ErrorCode.NOT_FOUND, "the API has no such path")
    return JsonResponse(error.as_dict(), status=404)
