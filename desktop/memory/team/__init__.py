"""Team memory on PostgreSQL: local-first sync of shared memories between machines.

Never imports Qt. See docs in service.py (actions), engine.py (sync loop),
outbox.py (what leaves the machine), push.py / pull.py (the protocol) and
server_schema.py (the server's tables, roles and row-level security).
"""
