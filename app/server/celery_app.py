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

from .redis_jobs import connect_beats


@cache
def celery_for(url: str):
    """The one Celery application of this process for ``url`` (broker and result backend)."""
    from celery import Celery

    app = Celery("ascendsim", broker=url, backend=url)
    app.conf.update(
        # a task is taken off the queue when it starts; one lost with its worker is sent again by the web server's
        # next poll (app.server.redis_jobs: it stops beating), a bounded number of times. Celery's own requeue
        # (acks_late with reject_on_worker_lost) would run a task that kills its worker again and again.
        task_acks_late=False,
        task_reject_on_worker_lost=False,
        task_track_started=True,
        worker_prefetch_multiplier=1,  # one job at a time per worker process, first come first served
        # a task a worker took but had not started when it was lost goes back to the queue after this
        broker_transport_options={"visibility_timeout": 300},
        result_expires=3600,
    )
    connect_beats(app)  # a job says it runs while it runs: one lost with its worker is sent again (redis_jobs)
    return app
