"""Settings for kubegap-web, all read from the environment.

With no environment at all the product runs on its embedded default: SQLite and
a file-system Celery broker under ``var/``, a secret key generated once and kept
there. Setting ``DATABASE_URL`` leaves the embedded default: from then on a
``SECRET_KEY`` must be given, because a generated key on one host would not
match the others.
"""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from kubegap_web.env import envbool, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("KUBEGAP_VAR_DIR", str(BASE_DIR / "var"))).resolve()

DATABASE_URL = os.environ.get("DATABASE_URL", "")
EMBEDDED = not DATABASE_URL


def _secret_key() -> str:
    key = os.environ.get("SECRET_KEY", "")
    if key:
        return key
    if not EMBEDDED:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. It is required whenever DATABASE_URL is set; "
            "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "audits",
    "cases",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "kubegap_web.urls"
WSGI_APPLICATION = "kubegap_web.wsgi.application"

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
            ],
        },
    },
]

if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=envint("DB_CONN_MAX_AGE", 60))}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "kubegap.sqlite3"),
            # The web server, the worker and the scheduler share this file.
            # IMMEDIATE makes a writer wait for the lock up front instead of
            # failing half-way with "database is locked".
            "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(VAR_DIR / "static")))
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = VAR_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = envbool("WHITENOISE_USE_FINDERS", DEBUG)

SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Celery. Redis is the broker whenever REDIS_URL is set; otherwise messages go
# through a folder under var/, which the web server, worker and scheduler of
# `make run` share on one machine.
REDIS_URL = os.environ.get("REDIS_URL", "")
AUDIT_SOFT_TIME_LIMIT = envint("AUDIT_SOFT_TIME_LIMIT", 15 * 60, minimum=10)
AUDIT_HARD_TIME_LIMIT = envint("AUDIT_HARD_TIME_LIMIT", AUDIT_SOFT_TIME_LIMIT + 60, minimum=11)
if AUDIT_HARD_TIME_LIMIT <= AUDIT_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("AUDIT_HARD_TIME_LIMIT must be greater than AUDIT_SOFT_TIME_LIMIT.")

if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A message unacknowledged for longer than this is delivered again. Kept
    # above the hard limit so a running audit is not redelivered; if one were,
    # the run's lease would still refuse a second execution.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": envint("BROKER_VISIBILITY_TIMEOUT", AUDIT_HARD_TIME_LIMIT + 300, minimum=1)
    }
else:
    _broker_dir = VAR_DIR / "broker"
    for _folder in ("queue", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    # One dispatcher entry serves every cluster (no entry per cluster): it claims whichever are due.
    "prune-history": {"task": "audits.tasks.prune_history", "schedule": 6 * 3600.0},
    "dispatch-due-audits": {
        "task": "audits.tasks.dispatch_due_audits",
        "schedule": float(envint("DISPATCH_INTERVAL", 60, minimum=1)),
    },
}

# Audits.
# A running audit whose heartbeat is older than this belongs to a worker that
# died: it is retried once, then failed. No live audit outlasts the hard limit.
RUN_STALE_AFTER = envint("RUN_STALE_AFTER", AUDIT_HARD_TIME_LIMIT + 60, minimum=1)
RUN_MAX_ATTEMPTS = envint("RUN_MAX_ATTEMPTS", 2, minimum=1)
# Fernet keys for kubeconfigs at rest, comma-separated, newest first (old ones
# still decrypt, so keys can be rotated). Unset: derived from SECRET_KEY.
KUBEGAP_ENCRYPTION_KEYS = envlist("KUBEGAP_ENCRYPTION_KEY", [])
for _key in KUBEGAP_ENCRYPTION_KEYS:
    try:
        if len(base64.urlsafe_b64decode(_key)) != 32:
            raise ValueError
    except ValueError:  # binascii.Error is one too
        raise ImproperlyConfigured(
            "KUBEGAP_ENCRYPTION_KEY must be url-safe base64 of 32 bytes; generate one with: "
            "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"
        ) from None
COLLECT_CONCURRENCY = envint("COLLECT_CONCURRENCY", 4, minimum=1)
COLLECT_PAGE_SIZE = envint("COLLECT_PAGE_SIZE", 500, minimum=1)
COLLECT_REQUEST_TIMEOUT = envint("COLLECT_REQUEST_TIMEOUT", 60, minimum=1)
COLLECT_DEADLINE = envint("COLLECT_DEADLINE", 600, minimum=10)
COLLECT_MAX_RETRIES = envint("COLLECT_MAX_RETRIES", 5, minimum=0)
SNAPSHOT_MAX_BYTES = envint("SNAPSHOT_MAX_BYTES", 2 * 1024**3, minimum=1024)
DEFAULT_SCHEDULE_CRON = envstr("DEFAULT_SCHEDULE_CRON", "0 2 * * *")

# Bearer token Prometheus sends to read /metrics; unset, /metrics answers 404.
METRICS_TOKEN = envstr("METRICS_TOKEN", "")

# Links in notifications point here.
KUBEGAP_BASE_URL = envstr("KUBEGAP_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
NOTIFY_TIMEOUT = envint("NOTIFY_TIMEOUT", 10, minimum=1)
# A failed delivery is retried this many times, waiting BASE, 2*BASE, 4*BASE... seconds.
NOTIFY_MAX_RETRIES = envint("NOTIFY_MAX_RETRIES", 5, minimum=0)
NOTIFY_RETRY_BASE = envint("NOTIFY_RETRY_BASE", 2, minimum=1)
# Runs older than this are deleted (finding intervals stay, so history is exact);
# the snapshots stored with runs are deleted sooner.
RETENTION_DAYS = envint("RETENTION_DAYS", 400, minimum=1)
SNAPSHOT_RETENTION_DAYS = envint("SNAPSHOT_RETENTION_DAYS", 30, minimum=1)

EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "kubegap@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
