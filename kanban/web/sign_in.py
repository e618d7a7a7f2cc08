"""The sign-in page, with single sign-on when an OpenID provider is configured
(``kanban.accounts.oidc``): a button to it beside the password form, or, enforced, the page
sends a person who opened a page that needs sign-in straight to the provider. Password
sign-in is then for staff only, at ``/accounts/login/?local=1`` (the escape hatch when the
provider is down or misconfigured). A bare ``/accounts/login/``, where sign-out lands, shows
the button and does not bounce, or signing out would sign one straight back in."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.views import View
from django.views.decorators.cache import never_cache
from mozilla_django_oidc.views import OIDCAuthenticationRequestView

from kanban.accounts.oidc import oidc_provider, refused
from kanban.accounts.oidc_backend import OidcBackend
from kanban.quotas.sign_in import ThrottledAuthenticationForm
from storage.errors import ErrorCode, KanbanError

#: A refused single sign-on's status; anything else the person can start again (400).
_STATUS: Final = {
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.TOO_LARGE: 502,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.CONFLICT: 409,
    ErrorCode.NOT_SUPPORTED: 404,
}
BACKEND: Final = f"{OidcBackend.__module__}.{OidcBackend.__qualname__}"


def _sso(request: HttpRequest) -> dict[str, Any] | None:
    if not settings.KANBAN_OIDC_ISSUER:
        return None
    next_url = request.GET.get("next") or request.POST.get("next") or ""
    start = reverse("oidc-start") + (f"?{urlencode({'next': next_url})}" if next_url else "")
    return {
        "button": settings.KANBAN_OIDC_BUTTON,
        "enforced": settings.KANBAN_OIDC_ENFORCED,
        "local": request.GET.get("local") == "1" or request.method == "POST",
        "start": start,
    }


def sso_refused(request: HttpRequest, error: KanbanError) -> HttpResponse:
    """The sign-in page saying why single sign-on did not sign anyone in."""
    context = {"oidc": _sso(request), "oidc_error": error.message}
    return render(request, "registration/login.html", context, status=_STATUS.get(error.code, 400))


class SignInForm(ThrottledAuthenticationForm):
    def confirm_login_allowed(self, user: User) -> None:
        super().confirm_login_allowed(user)
        if settings.KANBAN_OIDC_ENFORCED and not user.is_staff:
            raise ValidationError(
                f"This server signs people in with “{settings.KANBAN_OIDC_BUTTON}”; "
                "password sign-in is for staff.",
                code="sso_only",
            )


class SignInView(LoginView):
    authentication_form = SignInForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        sso = _sso(request)
        bounce = sso and sso["enforced"] and not sso["local"] and request.GET.get("next")
        if bounce and not request.user.is_authenticated:
            return redirect(sso["start"])  # type: ignore[index]
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "oidc": _sso(self.request)}


class OidcStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider, the library keeping this sign-in's state, nonce
    and PKCE verifier in the session; the endpoint from discovery."""

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library's reads settings this server has not
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.KANBAN_OIDC_ISSUER:
            raise Http404
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc_provider().authorization_endpoint
        except KanbanError as error:
            return sso_refused(request, error)
        response: HttpResponse = super().get(request)
        return response


@never_cache
def oidc_callback(request: HttpRequest) -> HttpResponse:
    """Where the provider sends the browser back: this browser's sign-in (by its state) is
    finished once, whatever the outcome; the backend turns the code into the person."""
    if not settings.KANBAN_OIDC_ISSUER:
        raise Http404
    states = request.session.get("oidc_states")
    state = request.GET.get("state", "")
    started = states.pop(state, None) if isinstance(states, dict) else None
    if started is not None:
        request.session.modified = True
        request.session.save()  # used now, so a second arrival with it finds nothing
    try:
        if request.GET.get("error"):
            said = request.GET.get("error_description") or request.GET["error"]
            raise refused(f"The sign-in provider said: {said[:200]}.")
        if started is None:
            raise refused("This sign-in was not started in this browser, or was finished already.")
        issuer = request.GET.get("iss")
        if issuer is not None and issuer != oidc_provider().issuer:  # RFC 9207's mix-up check
            raise refused("The answer comes from another sign-in provider.")
        user = OidcBackend().authenticate(
            request, nonce=started.get("nonce"), code_verifier=started.get("code_verifier")
        )
    except KanbanError as error:
        return sso_refused(request, error)
    next_url = request.session.pop("oidc_login_next", None)
    auth.login(request, user, backend=BACKEND)
    return redirect(next_url or resolve_url(settings.LOGIN_REDIRECT_URL))
