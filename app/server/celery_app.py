"""The Celery side of a class server: jobs (runs, exercises) on workers of any number of machines.

With ``ASCENDSIM_REDIS_URL`` set, the dashboard's background callbacks go to Celery over Redis instead of
processes of the web server's machine. A worker runs the same dashboard code (so it knows the same callbacks)
and needs the same runs folder (``ASCENDSIM_RUNS``, shared by every machine) and the same Redis::

    ASCENDSIM_REDIS_URL=redis://host:6379/0 ASCENDSIM_RUNS=/srv/ascendsim-runs \\
        celery -A app.web.celery_worker worker --concurrency 2

(:mod:`app.web.celery_worker` builds the dashboard, whose callbacks are the tasks, and hands Celery the
application made here.) The web servers, started with the same two variables, send the jobs.
"""

from __future__ import annotations

from functools import cache


@cache
def celery_for(url: str):
    """The one Celery application of this process for ``url`` (broker and result backend)."""
    from celery import Celery

    app = Celery("ascendsim", broker=url, backend=url)
    app.conf.update(
        task_acks_late=True,  # a worker killed in the middle: the job goes back to the queue
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,  # one job at a time per worker process, first come first served
        result_expires=3600,
    )
    return app
