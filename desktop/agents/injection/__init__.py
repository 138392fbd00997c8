"""Memory injection: session start (T1), prefetch (T2), tool-result augmentation (T3), step decider (T4)."""
