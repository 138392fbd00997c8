"""Memory lifecycle: portability, decay, pruning, conflicts, staleness."""
