from __future__ import annotations

from kubegap_web.celery import app as celery_app

__all__ = ["celery_app"]
