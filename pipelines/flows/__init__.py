"""Prefect flows and tasks, thin wrappers over jobs/: the only room that imports Prefect."""
