"""What only a dashboard server needs: the run store every worker shares, the limits a class server enforces,
and the jobs that compute runs and grade exercises outside any request.

* :mod:`.store` — finished runs serialised compactly, cached by their parameters, checked on every load;
* :mod:`.limits` — the sizes a shared server refuses before it starts a run;
* :mod:`.managers` — which engine runs background jobs (this machine's processes, or Celery over Redis for a
  class) and how a page's polls always get their answer;
* :mod:`.jobs` — what a job passes: bounded slots, one run per key however many ask for it, what a session may
  start;
* :mod:`.launcher` — the one process that forks this machine's jobs;
* :mod:`.leases`, :mod:`.redis_jobs`, :mod:`.celery_app` — the same guarantees over Redis and Celery workers.
"""
