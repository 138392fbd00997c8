"""Engram in each agent's own plugin format (bundle.py), installed by the agent's own CLI (agent_cli.py),
for every agent found on the machine at once (setup.py: ``engram setup``)."""
