"""What ``celery -A app.web.celery_worker worker`` loads: the dashboard built in the worker (its background
callbacks are the tasks) and the Celery application of :mod:`app.server.celery_app` for the class server's
Redis (``ASCENDSIM_REDIS_URL``)."""

from __future__ import annotations

import os

from app.collector import before_forking_jobs
from app.server.celery_app import celery_for


def _build():
    url = os.environ.get("ASCENDSIM_REDIS_URL")
    if not url:
        raise RuntimeError("ASCENDSIM_REDIS_URL is not set: a Celery worker needs the class server's Redis")
    from app.web.app import create_app

    create_app(lang=os.environ.get("ASCENDSIM_LANG", "en"))  # registers every background callback as a task
    app = celery_for(url)
    before_forking_jobs()  # the pool's processes, forked from this one, run the jobs
    return app


def __getattr__(name: str):
    if name == "app":  # what ``celery -A app.web.celery_worker`` looks for
        return _build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
