"""Fetching the remote sources: one guarded, bounded, retried GET per declared file
(`remote.py`), its redirects checked by `guard.py`, its body decoded by `body.py`, its pages
joined by `pages.py`."""
