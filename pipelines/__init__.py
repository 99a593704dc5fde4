"""The composition root of specledger, in rooms by job: cli/, flows/, jobs/, inputs/,
ledger/, briefing/ and the settings (see docs/architecture.md)."""
