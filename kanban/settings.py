"""One environment-driven settings module.

With no environment at all the server runs on the embedded default: an SQLite file under
``var/`` and the in-memory channel layer. ``DATABASE_URL`` selects PostgreSQL and
``REDIS_URL`` selects the Redis channel layer. ``KANBAN_MODE=production`` turns on every
deployment safeguard and refuses to start without a real ``SECRET_KEY``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from kanban.environment import (
    CONSOLE_EMAIL_BACKEND,
    database_from_url,
    email_from_url,
    env_bool,
    env_choice,
    env_executable,
    env_float,
    env_int,
    env_list,
    env_networks,
)
from storage import limits

BASE_DIR = Path(__file__).resolve().parent.parent


# Anything but these two stops the process: "prod" meaning development (DEBUG on, the fixed
# key, demo data) would be the worst kind of typo.
PRODUCTION = env_choice("KANBAN_MODE", "development", ("development", "production")) == (
    "production"
)

if PRODUCTION:
    SECRET_KEY = os.environ.get("SECRET_KEY", "")
    if len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
        raise ImproperlyConfigured("production needs SECRET_KEY of at least 50 varied characters")
else:
    # Development only: a fixed key keeps sessions across restarts of the local server.
    SECRET_KEY = os.environ.get("SECRET_KEY") or "dev-insecure-kanban-key-do-not-use-in-production"

DEBUG = env_bool("DEBUG", default=not PRODUCTION)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG shows tracebacks and settings to anyone: not in production")
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])


def plugin_origin_from_env(name: str) -> str:
    """``scheme://host[:port]`` of a separate origin for plugin files, or "" to serve them
    from this one. Nothing else is accepted: a path or a trusted origin would undo it."""
    raw = os.environ.get(name, "").strip().rstrip("/")
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path or parts.query:
        raise ImproperlyConfigured(f"{name} must be scheme://host[:port], got {raw!r}")
    if raw.lower() in {origin.lower().rstrip("/") for origin in CSRF_TRUSTED_ORIGINS}:
        raise ImproperlyConfigured(f"{name} must not be one of CSRF_TRUSTED_ORIGINS")
    return f"{parts.scheme}://{parts.netloc.lower()}"


# Plugin files (third-party code) from an origin of their own, the way hosted plugin
# platforms isolate apps: even a browser that ignored the sandbox would run them where no
# session cookie is sent. That host serves only plugin files and static files.
KANBAN_PLUGIN_ORIGIN = plugin_origin_from_env("KANBAN_PLUGIN_ORIGIN")
# The hosts the boards themselves are served from: the plugin host, if it is a name of its
# own, serves plugin and static files on any port and nothing else.
KANBAN_MAIN_HOSTS = list(ALLOWED_HOSTS)
if KANBAN_PLUGIN_ORIGIN:
    ALLOWED_HOSTS = [*ALLOWED_HOSTS, urlsplit(KANBAN_PLUGIN_ORIGIN).hostname or ""]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "django_tasks_db",
    "storage",
    "kanban",
]

MIDDLEWARE = [
    "kanban.observability.logs.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "kanban.web.security.DefaultContentSecurityPolicyMiddleware",
    "kanban.web.security.PluginOriginMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "kanban.urls"
ASGI_APPLICATION = "kanban.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "kanban.web.inbox.inbox_count",
            ],
        },
    },
]

# Without DATABASE_URL: the embedded default, an SQLite file under var/.
SQLITE_PATH = Path(os.environ.get("KANBAN_SQLITE_PATH", BASE_DIR / "var" / "kanban.sqlite3"))
DATABASE_URL = os.environ.get("DATABASE_URL", "") or f"sqlite:///{SQLITE_PATH.resolve()}"
DATABASES = {"default": database_from_url(DATABASE_URL)}

REDIS_URL = os.environ.get("REDIS_URL", "")
# Every Redis key of this deployment starts with it: the channel layer's and the quotas'.
KANBAN_REDIS_PREFIX = os.environ.get("KANBAN_REDIS_PREFIX", "kanban")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py's default socket_timeout of 5 s drops idle consumers whose
                # blocking receive outlives it; 30 s sits well above the layer's poll.
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": KANBAN_REDIS_PREFIX,
                # How many messages one worker's hub channel may hold unread, and for how
                # many seconds. Past either the layer drops a message without a word; the
                # hub tells the affected subscribers to resync (kanban/bridge/overflow.py).
                "capacity": env_int("KANBAN_LAYER_CAPACITY", 1000, minimum=1),
                "expiry": env_int("KANBAN_LAYER_EXPIRY", 60, minimum=1),
            },
        }
    }
    # The REST API's rate (DRF's throttle keeps its counts in the cache) is then one for
    # the whole deployment, not one per worker.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{KANBAN_REDIS_PREFIX}:cache",
            "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# A background job's progress (kanban/jobs/progress.py): the worker writes it while the job's
# own transaction is open, where no other connection could read it, and every web worker
# reads it. Redis, or files under var/ for the embedded default's worker beside daphne.
CACHES["jobs"] = (
    {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"{KANBAN_REDIS_PREFIX}:jobs",
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    }
    if REDIS_URL
    else {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(BASE_DIR / "var" / "jobs-progress"),
    }
)
# Background jobs (kanban/jobs/): rows in this database, run by `manage.py db_worker` (and by
# the worker `manage.py serve` starts beside daphne).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# For test suites: checking a password costs microseconds instead of half a second, as
# Django's docs advise for tests. Production refuses it.
if env_bool("KANBAN_FAST_PASSWORD_HASHING", default=False):
    if PRODUCTION:
        raise ImproperlyConfigured("KANBAN_FAST_PASSWORD_HASHING is for test suites only")
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
# /static/bridge/: the SDK and host relay (built into bridge_js/dist), and the plugin kit
# (bridge_js/static/bridge/plugin-kit.js, an ES module as written).
STATICFILES_DIRS = [
    ("bridge", BASE_DIR / "bridge_js" / "dist"),
    ("bridge", BASE_DIR / "bridge_js" / "static" / "bridge"),
]
# The SDK and host relay are served from finders so a fresh checkout needs no collectstatic.
WHITENOISE_USE_FINDERS = True
# Every static file answers `Access-Control-Allow-Origin: *` (WhiteNoise's default, stated
# here because plugins rely on it): a sandboxed plugin page has an opaque origin, and a
# module script it imports from /static/ (the plugin kit) is fetched with CORS.
WHITENOISE_ALLOW_ALL_ORIGINS = True
WHITENOISE_AUTOREFRESH = DEBUG
# The SDK's types (/static/bridge/kanban.d.ts) are TypeScript, which WhiteNoise's nginx-based
# table takes for an MPEG stream (video/mp2t): a browser opening the URL downloaded it.
WHITENOISE_MIMETYPES = {".ts": "text/plain"}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/accounts/login/"
AUTHENTICATION_BACKENDS = ["kanban.quotas.sign_in.ThrottledModelBackend"]
# Failed sign-ins allowed per username within the window (kanban/quotas/sign_in.py).
KANBAN_LOGIN_MAX_FAILURES = env_int("KANBAN_LOGIN_MAX_FAILURES", 10, minimum=1)
KANBAN_LOGIN_WINDOW = env_int("KANBAN_LOGIN_WINDOW", 900, minimum=1)
# Accounts made through invite links a day (kanban/quotas/sign_in.py), for the deployment:
# through one inviter's links, and from one address; "staff" lets only staff links make them.
KANBAN_INVITE_SIGNUPS = env_choice("KANBAN_INVITE_SIGNUPS", "all", ("all", "staff"))
KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = env_int(
    "KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY", 20, minimum=1
)
KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY = env_int(
    "KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY", 10, minimum=1
)
# Peers whose X-Forwarded-For is believed (kanban/quotas/client_address.py); nobody else's is.
KANBAN_TRUSTED_PROXIES = env_networks("KANBAN_TRUSTED_PROXIES", [])
# Email (kanban/jobs/email.py): one URL, EMAIL_URL, parsed strictly (email_from_url). Every
# mail Django sends is queued as a row and sent by the background worker through the backend
# the URL names, retried; unset, that is the console (the worker's terminal).
if os.environ.get("EMAIL_HOST"):
    raise ImproperlyConfigured(
        "EMAIL_HOST and its siblings are replaced by one EMAIL_URL, e.g. "
        "submission://user:password@smtp.example.com:587"
    )
EMAIL_URL = os.environ.get("EMAIL_URL", "").strip()
_email = email_from_url(EMAIL_URL) if EMAIL_URL else {"EMAIL_BACKEND": CONSOLE_EMAIL_BACKEND}
#: What delivers a queued mail, in the worker; EMAIL_BACKEND only queues it.
KANBAN_EMAIL_BACKEND: str = _email["EMAIL_BACKEND"]
EMAIL_BACKEND = "kanban.jobs.email.QueuedEmailBackend"
EMAIL_HOST = _email.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = _email.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = bool(_email.get("EMAIL_USE_TLS"))
EMAIL_USE_SSL = bool(_email.get("EMAIL_USE_SSL"))
EMAIL_FILE_PATH = _email.get("EMAIL_FILE_PATH") or str(BASE_DIR / "var" / "mail")
# A mail server that hangs holds one worker, never a request; still not for long.
EMAIL_TIMEOUT = _email.get("EMAIL_TIMEOUT") or 10
DEFAULT_FROM_EMAIL = _email.get("DEFAULT_FROM_EMAIL") or os.environ.get(
    "DEFAULT_FROM_EMAIL", "kanban@localhost"
)
SERVER_EMAIL = _email.get("SERVER_EMAIL") or DEFAULT_FROM_EMAIL
#: Whether the product offers what needs mail (invite links by email, password reset): an
#: operator named a way to send it, or this is development, where the console shows it.
KANBAN_EMAIL_ENABLED = bool(EMAIL_URL) or not PRODUCTION
#: Runs of one mail at most, and the wait before the first retry (doubling after each).
KANBAN_EMAIL_ATTEMPTS = env_int("KANBAN_EMAIL_ATTEMPTS", 6, minimum=1)
KANBAN_EMAIL_RETRY_SECONDS = env_float("KANBAN_EMAIL_RETRY_SECONDS", 30.0, minimum=0.0)
#: Where people open this server, for links in mail sent outside a request (notifications):
#: the first of ALLOWED_HOSTS over HTTPS in production, the development server otherwise.
KANBAN_SITE_URL = os.environ.get("KANBAN_SITE_URL", "").strip().rstrip("/") or (
    f"https://{ALLOWED_HOSTS[0]}" if PRODUCTION and ALLOWED_HOSTS else "http://127.0.0.1:8000"
)
if (
    urlsplit(KANBAN_SITE_URL).scheme not in {"http", "https"}
    or not urlsplit(KANBAN_SITE_URL).hostname
):
    raise ImproperlyConfigured(f"KANBAN_SITE_URL={KANBAN_SITE_URL!r} is no http(s) address")
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"


def oidc_issuer_from_env(name: str) -> str:
    """An OpenID provider's issuer: https, or http on this machine only (a provider in a
    test or beside a development server); no query or fragment, which discovery cannot
    carry."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    loopback = parts.hostname in {"127.0.0.1", "localhost", "::1"}
    if not parts.hostname or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"{name} must be an https:// issuer URL, got {raw!r}")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise ImproperlyConfigured(f"{name} must be https:// (http only on 127.0.0.1), got {raw!r}")
    return raw.rstrip("/")


def env_required(name: str, *, because: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"{name} is needed {because}")
    return value


# Single sign-on with OpenID Connect (kanban/accounts/oidc.py, through mozilla-django-oidc): on
# when KANBAN_OIDC_ISSUER names the provider, whose endpoints and keys come from its discovery
# document at the first sign-in and are kept an hour. The client's id and secret come from the
# environment; the sign-in page shows a button (KANBAN_OIDC_BUTTON) or, enforced, sends people
# straight to the provider, password sign-in left to staff at /accounts/login/?local=1.
KANBAN_OIDC_ISSUER = oidc_issuer_from_env("KANBAN_OIDC_ISSUER")
_oidc_because = "when KANBAN_OIDC_ISSUER is set"
KANBAN_OIDC_CLIENT_ID = (
    env_required("KANBAN_OIDC_CLIENT_ID", because=_oidc_because) if KANBAN_OIDC_ISSUER else ""
)
KANBAN_OIDC_CLIENT_SECRET = (
    env_required("KANBAN_OIDC_CLIENT_SECRET", because=_oidc_because) if KANBAN_OIDC_ISSUER else ""
)
if not KANBAN_OIDC_ISSUER:
    _stray = sorted(k for k in os.environ if k.startswith("KANBAN_OIDC_") and os.environ[k])
    if _stray:
        raise ImproperlyConfigured(f"{_stray[0]} means nothing without KANBAN_OIDC_ISSUER")
KANBAN_OIDC_BUTTON = os.environ.get("KANBAN_OIDC_BUTTON", "").strip() or (
    "Sign in with single sign-on"
)
if len(KANBAN_OIDC_BUTTON) > 60:
    raise ImproperlyConfigured("KANBAN_OIDC_BUTTON is a button's label: at most 60 characters")
KANBAN_OIDC_ENFORCED = env_bool("KANBAN_OIDC_ENFORCED", default=False)
KANBAN_OIDC_SCOPES = os.environ.get("KANBAN_OIDC_SCOPES", "").strip() or "openid email profile"
if "openid" not in KANBAN_OIDC_SCOPES.split():
    raise ImproperlyConfigured(f"KANBAN_OIDC_SCOPES={KANBAN_OIDC_SCOPES!r} lacks openid")
#: The claim a new account's username is taken from (checked as sign-up checks one).
KANBAN_OIDC_USERNAME_CLAIM = os.environ.get("KANBAN_OIDC_USERNAME_CLAIM", "").strip() or (
    "preferred_username"
)
#: With a group named, the provider decides who is staff: members of it are, at each sign-in.
KANBAN_OIDC_STAFF_GROUP = os.environ.get("KANBAN_OIDC_STAFF_GROUP", "").strip()
KANBAN_OIDC_GROUPS_CLAIM = os.environ.get("KANBAN_OIDC_GROUPS_CLAIM", "").strip() or "groups"
KANBAN_OIDC_SIGN_ALGO = env_choice(
    "KANBAN_OIDC_SIGN_ALGO", "rs256", ("rs256", "rs384", "rs512", "ps256", "es256", "es384")
).upper()
KANBAN_OIDC_TIMEOUT = env_float("KANBAN_OIDC_TIMEOUT", 10.0, minimum=0.5)
# What mozilla-django-oidc reads; the provider's endpoints it is handed from discovery.
OIDC_RP_CLIENT_ID = KANBAN_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = KANBAN_OIDC_CLIENT_SECRET
OIDC_RP_SIGN_ALGO = KANBAN_OIDC_SIGN_ALGO
OIDC_RP_SCOPES = KANBAN_OIDC_SCOPES
OIDC_USE_PKCE = True
OIDC_TOKEN_USE_BASIC_AUTH = True
OIDC_TIMEOUT = KANBAN_OIDC_TIMEOUT
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc-callback"
if KANBAN_OIDC_ISSUER:
    AUTHENTICATION_BACKENDS = [*AUTHENTICATION_BACKENDS, "kanban.accounts.oidc_backend.OidcBackend"]

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
    if env_bool("KANBAN_BEHIND_TLS_PROXY", default=True):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Probes and Prometheus reach each worker on the private network over plain HTTP; the
    # public proxy refuses /metrics (deploy/nginx.conf) and the token guards it still.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "kanban.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "kanban.api.permissions.TokenScopePermission",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["kanban.api.parsers.StrictJSONParser"],
    "EXCEPTION_HANDLER": "kanban.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["kanban.quotas.rest.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": os.environ.get("KANBAN_API_RATE", "6000/min")},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Kanban bridge API",
    "DESCRIPTION": "The Server connection: project KV, related KV, PersistentValue, "
    "configurations and knowledge.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "kanban.api.schema.strict_schema",
        "kanban.api.examples.attach_examples",
    ],
}

# Product limits (defaults from bridge_js/protocol.json): a value is at most this many bytes
# of compact UTF-8 JSON, a Knowledge document's markdown at most this many bytes of UTF-8.
# Every cap in front of them (request bodies, frames, the proxy's) is derived in
# storage/limits.py.
KANBAN_MAX_VALUE_BYTES = env_int("KANBAN_MAX_VALUE_BYTES", limits.DEFAULT_VALUE_BYTES, minimum=1)
KANBAN_MAX_DOCUMENT_BYTES = env_int(
    "KANBAN_MAX_DOCUMENT_BYTES", limits.DEFAULT_DOCUMENT_BYTES, minimum=1
)
# A Knowledge search reads documents one by one: it stops with too_large past this many
# characters of markdown (4 documents at their limit), and one person runs at most this
# many at a time (more are rate_limited).
KANBAN_SEARCH_BUDGET_CHARS = env_int("KANBAN_SEARCH_BUDGET_CHARS", 32 * 2**20, minimum=1)
KANBAN_SEARCHES_PER_USER = env_int("KANBAN_SEARCHES_PER_USER", 2, minimum=1)
# On PostgreSQL the bridge's reads (get, getMany, the access decision of a subscribe or a
# watch) run on each worker's event loop over a pool of async connections of this size
# (storage/aio.py); off, they run in threads as writes do.
KANBAN_READS_ON_LOOP = env_bool("KANBAN_READS_ON_LOOP", True)
KANBAN_LOOP_POOL_MAX = env_int("KANBAN_LOOP_POOL_MAX", 4, minimum=1)
# The bridge websocket: per-connection message rate and burst.
KANBAN_BRIDGE_RATE = env_float("KANBAN_BRIDGE_RATE", 200.0, minimum=0.001)
KANBAN_BRIDGE_BURST = env_float("KANBAN_BRIDGE_BURST", 400.0, minimum=1.0)
# One person's share, across all their sockets: open sockets, and a message rate and burst
# (0: four sockets' worth). Per worker (kanban/quotas/worker.py) and, with REDIS_URL, for the
# whole deployment (kanban/quotas/deployment.py); searches likewise.
KANBAN_SOCKETS_PER_USER = env_int("KANBAN_SOCKETS_PER_USER", 32, minimum=1)
KANBAN_BRIDGE_USER_RATE = env_float("KANBAN_BRIDGE_USER_RATE", 0.0)
KANBAN_BRIDGE_USER_BURST = env_float("KANBAN_BRIDGE_USER_BURST", 0.0)
# A watch's change entry carries the new value when its JSON is at most this many bytes (a
# viewer applies it without reading); larger values are named only. 0 pushes none.
KANBAN_PUSH_VALUE_BYTES = env_int("KANBAN_PUSH_VALUE_BYTES", limits.DEFAULT_PUSH_VALUE_BYTES)
# Bytes a socket's peer may leave unread (events and replies the worker holds for it) before
# its events are held back; once it read all but a quarter, its watches resync instead
# (kanban/bridge/backpressure.py). Far above what a reading page leaves, even on a slow link.
KANBAN_SOCKET_BUFFER_BYTES = env_int("KANBAN_SOCKET_BUFFER_BYTES", 4 * 2**20, minimum=1)
# Every write keeps the version it made in the key's history (the value it replaced stays
# there too): at most this many versions per key, none older than this many days (no read
# shows an older one; ``manage.py prune`` deletes them).
KANBAN_HISTORY_REVISIONS = env_int("KANBAN_HISTORY_REVISIONS", 50, minimum=1)
KANBAN_HISTORY_DAYS = env_int("KANBAN_HISTORY_DAYS", 90, minimum=1)
# What one project may store in all: its values, kept versions (a deleted key's too, until
# pruned or purged) and Knowledge documents, as UTF-8 JSON. A write past it is refused
# (quota_exceeded). 256 MiB holds five keys at the value limit with all their versions, or
# thousands of ordinary boards, and bounds what one project's writer can fill the disk with.
KANBAN_PROJECT_BYTES = env_int("KANBAN_PROJECT_BYTES", 256 * 2**20, minimum=1)
# One person's write rate in bytes of JSON (values and documents), across every worker and
# transport (kanban/quotas/deployment.py): 1 MiB a second after a burst of 32 values at the value
# limit, where one client wrote 660 MB a minute; past it a write is rate_limited.
KANBAN_WRITE_BYTES_PER_USER = env_float("KANBAN_WRITE_BYTES_PER_USER", 2.0**20, minimum=1.0)
KANBAN_WRITE_BYTES_BURST = env_float("KANBAN_WRITE_BYTES_BURST", 32.0 * 2**20, minimum=2.0**20)
# The largest Trello board export (its JSON file) an import reads (kanban/imports/trello.py).
KANBAN_TRELLO_IMPORT_BYTES = env_int("KANBAN_TRELLO_IMPORT_BYTES", 100 * 2**20, minimum=1)
# Files attached to cards (kanban/data/attachments.py): at most this many bytes each, counted
# in their project's KANBAN_PROJECT_BYTES; served through signed links that live this long.
KANBAN_ATTACHMENT_BYTES = env_int(
    "KANBAN_ATTACHMENT_BYTES", limits.DEFAULT_ATTACHMENT_BYTES, minimum=1
)
KANBAN_ATTACHMENT_URL_SECONDS = env_int("KANBAN_ATTACHMENT_URL_SECONDS", 300, minimum=1)
# Where their bytes go, through Django's storage API: files under KANBAN_ATTACHMENTS_DIR
# (var/attachments; a volume of its own in a container, say), or with
# KANBAN_ATTACHMENTS_S3_BUCKET any S3-compatible store (django-storages; credentials from
# the usual AWS_* variables, KANBAN_ATTACHMENTS_S3_ENDPOINT for a store other than AWS).
KANBAN_ATTACHMENTS_STORAGE: dict[str, Any] = {
    "BACKEND": "django.core.files.storage.FileSystemStorage",
    "OPTIONS": {
        "location": str(
            Path(os.environ.get("KANBAN_ATTACHMENTS_DIR") or BASE_DIR / "var" / "attachments")
        )
    },
}
if os.environ.get("KANBAN_ATTACHMENTS_S3_BUCKET"):
    KANBAN_ATTACHMENTS_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ["KANBAN_ATTACHMENTS_S3_BUCKET"],
            "endpoint_url": os.environ.get("KANBAN_ATTACHMENTS_S3_ENDPOINT") or None,
            "region_name": os.environ.get("AWS_DEFAULT_REGION") or None,
            "default_acl": None,
            "querystring_auth": False,
            "file_overwrite": False,
        },
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "attachments": KANBAN_ATTACHMENTS_STORAGE,
}
# Boards one person may own (archived ones included) before creating another is refused.
KANBAN_MAX_BOARDS_PER_USER = env_int("KANBAN_MAX_BOARDS_PER_USER", 50, minimum=1)
# Notifications one person may send a minute, each recipient counted (kanban/data/notifications).
KANBAN_NOTIFY_PER_MINUTE = env_int("KANBAN_NOTIFY_PER_MINUTE", 30, minimum=1)
# However many senders: what one person's inbox takes in an hour (counted in the database).
KANBAN_NOTIFY_PER_RECIPIENT_HOUR = env_int("KANBAN_NOTIFY_PER_RECIPIENT_HOUR", 100, minimum=1)
# How long an inbox keeps a notification, read or not, before ``manage.py prune`` deletes it.
KANBAN_NOTIFICATION_DAYS = env_int("KANBAN_NOTIFICATION_DAYS", 90, minimum=1)
# Outgoing webhooks (kanban/webhooks): never to loopback, private, link-local, multicast or
# reserved addresses unless this allows it (a receiver on the same machine or network).
KANBAN_WEBHOOKS_ALLOW_PRIVATE = env_bool("KANBAN_WEBHOOKS_ALLOW_PRIVATE", default=False)
# A failed delivery is tried again after base, 2x base, 4x base... seconds, at most this many
# tries in all; a webhook is turned off after this many failed tries in a row.
KANBAN_WEBHOOK_BACKOFF_SECONDS = env_float("KANBAN_WEBHOOK_BACKOFF_SECONDS", 30.0, minimum=0.0)
KANBAN_WEBHOOK_ATTEMPTS = env_int("KANBAN_WEBHOOK_ATTEMPTS", 6, minimum=1)
KANBAN_WEBHOOK_DISABLE_AFTER = env_int("KANBAN_WEBHOOK_DISABLE_AFTER", 15, minimum=1)
KANBAN_DEMO_DATA = env_bool("KANBAN_DEMO_DATA", default=not PRODUCTION)
# The esbuild that builds a TypeScript plugin (import_project, startplugin): this one only,
# never one a package ships or one on PATH. The default is the pinned one `npm ci` installs
# in bridge_js (its binary, not the node_modules/.bin link).
KANBAN_ESBUILD = env_executable(
    "KANBAN_ESBUILD", BASE_DIR / "bridge_js" / "node_modules" / "esbuild" / "bin" / "esbuild"
)

# /metrics answers this bearer token only (404 while unset); see kanban/observability.
KANBAN_METRICS_TOKEN = os.environ.get("KANBAN_METRICS_TOKEN", "")
# "json": one JSON object per log line, with the request's or socket's id.
KANBAN_LOG_FORMAT = env_choice("KANBAN_LOG_FORMAT", "text", ("text", "json"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "kanban.observability.logs.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            **({"formatter": "json"} if KANBAN_LOG_FORMAT == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # The MCP SDK logs every stateless request's start and end at INFO.
        "mcp": {"level": "WARNING"},
    },
}
