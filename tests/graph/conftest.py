"""Keep pytest out of the fixture repositories (they contain their own test files)."""

collect_ignore_glob = ["fixtures/*"]
