"""Delivering a rendered briefing to its readers: e-mail and a folder (`deliver.py`)."""
