"""The `specledger` command line: one module per group of commands, thin over jobs/."""
