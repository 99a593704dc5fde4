"""Briefing rendering: a plain context in, HTML and PDF out. Never queries the database."""
