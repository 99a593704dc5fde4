"""The C2C performance model: iteration time, communication-to-computation ratios, memory."""
