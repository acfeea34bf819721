"""Serving the app: the one launcher of its servers (``launch.py``) and several replicas
behind nginx with sticky sessions (``replicas.py``, ``nginx.conf``; ``make serve-replicas``).

Imports nothing of ours: it starts ``app.py`` as a process."""
