"""What the jobs and the briefing read from the ledger: the newest version, resolved values, a
scenario's cluster figures."""
