"""What only a dashboard server needs: the run store every worker shares, the limits a class server enforces,
and the jobs that compute runs and grade exercises outside any request.

* :mod:`.store` — finished runs serialised compactly, cached by their parameters, checked on every load;
* :mod:`.limits` — the sizes a shared server refuses before it starts a run;
* :mod:`.jobs` — background work: which manager runs it (Diskcache here, Celery over Redis for a class),
  bounded slots, one run per key however many ask for it, and what a session may start.
"""
