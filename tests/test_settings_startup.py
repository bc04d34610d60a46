"""The settings module as a process would load it, in a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRINT_SETTINGS = (
    "from kubegap_web import settings as s; print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.DEBUG)"
)


def _load_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY", "REDIS_URL", "DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
    )


def test_it_runs_embedded_with_no_configuration_and_keeps_its_secret_key(tmp_path: Path) -> None:
    first = _load_settings({"KUBEGAP_VAR_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["django.db.backends.sqlite3", "filesystem://localhost/", "False"]
    key = (tmp_path / "secret_key").read_text()
    assert _load_settings({"KUBEGAP_VAR_DIR": str(tmp_path)}).returncode == 0
    assert (tmp_path / "secret_key").read_text() == key


def test_it_refuses_to_start_on_a_real_database_without_a_secret_key(tmp_path: Path) -> None:
    result = _load_settings({"KUBEGAP_VAR_DIR": str(tmp_path), "DATABASE_URL": "postgres://u@127.0.0.1:1/x"})
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_it_uses_redis_as_the_broker_when_redis_url_is_set(tmp_path: Path) -> None:
    result = _load_settings({"KUBEGAP_VAR_DIR": str(tmp_path), "REDIS_URL": "redis://127.0.0.1:6399/0"})
    assert result.stdout.split()[1] == "redis://127.0.0.1:6399/0"


def test_it_names_a_bad_setting(tmp_path: Path) -> None:
    result = _load_settings({"KUBEGAP_VAR_DIR": str(tmp_path), "DEBUG": "perhaps"})
    assert result.returncode != 0
    assert "DEBUG='perhaps' is not a boolean" in result.stderr
