"""Assembling the briefing's plain context from the ledger (reports/ lays it out)."""
