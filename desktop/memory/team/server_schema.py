"""The shared store's schema on PostgreSQL: named, append-only migrations.

Same discipline as the local store: each migration has a name, the ledger
(`engram.schema_migrations`) lists the names applied, and a server whose ledger
names a migration this build does not know was upgraded by a newer Engram and is
refused with a clear message, never written to.

Isolation is Postgres's own: every team has a LOGIN role, every table has
row-level security keyed on `engram.my_team()` (the team whose role is
`current_user`), so one team's credentials cannot read or write another's rows
whatever SQL they send. The server holds text, metadata, version history and an
audit log without text; it holds no vectors (each machine embeds what it pulls).
A hard delete removes the row, its history and its conflicts; a tombstone with
only the global id remains so other machines delete their copy.
"""

from __future__ import annotations

MEMBER_ROLE = "engram_member"

CORE = f"""
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
    CREATE ROLE {MEMBER_ROLE} NOLOGIN;
  END IF;
END $$;

CREATE TABLE engram.teams (
  id         uuid PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  role_name  name NOT NULL UNIQUE,
  clock      bigint NOT NULL DEFAULT 0,   -- last change sequence number handed out
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE engram.members (
  team_id    uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  client_id  text NOT NULL,
  name       text NOT NULL,
  joined_at  timestamptz NOT NULL DEFAULT now(),
  last_seen  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, client_id)
);

CREATE TABLE engram.memories (
  gid             uuid PRIMARY KEY,
  team_id         uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  project_key     text NOT NULL,
  seq             bigint NOT NULL,
  version         integer NOT NULL,
  fingerprint     text NOT NULL,
  type            text NOT NULL,
  content         text NOT NULL,
  confidence      real NOT NULL,
  tags            jsonb NOT NULL DEFAULT '[]',
  related_files   jsonb NOT NULL DEFAULT '[]',
  related_modules jsonb NOT NULL DEFAULT '[]',
  citation_text   text,
  source          text NOT NULL,
  pinned          boolean NOT NULL DEFAULT false,
  deprecated      boolean NOT NULL DEFAULT false,
  user_verified   boolean NOT NULL DEFAULT false,
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_by      text NOT NULL,
  updated_client  text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_feed ON engram.memories(team_id, project_key, seq);
-- Fingerprint merge: one live memory per team, project and normalised content.
CREATE UNIQUE INDEX memories_live_fingerprint ON engram.memories(team_id, project_key, fingerprint)
  WHERE NOT deprecated;

-- Earlier texts of a memory (the current text is the memories row).
CREATE TABLE engram.memory_versions (
  gid        uuid NOT NULL REFERENCES engram.memories(gid) ON DELETE CASCADE,
  version    integer NOT NULL,
  team_id    uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  content    text NOT NULL,
  author     text NOT NULL,
  at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (gid, version)
);

CREATE TABLE engram.deletions (
  gid         uuid PRIMARY KEY,
  team_id     uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  project_key text NOT NULL,
  seq         bigint NOT NULL,
  deleted_by  text NOT NULL,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deletions_feed ON engram.deletions(team_id, project_key, seq);

CREATE TABLE engram.conflicts (
  id          bigserial PRIMARY KEY,
  team_id     uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  project_key text NOT NULL,
  seq         bigint NOT NULL,
  gid_a       uuid NOT NULL REFERENCES engram.memories(gid) ON DELETE CASCADE,
  gid_b       uuid NOT NULL REFERENCES engram.memories(gid) ON DELETE CASCADE,
  by_a        text NOT NULL,
  by_b        text NOT NULL,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conflicts_feed ON engram.conflicts(team_id, project_key, seq);

-- Who did what, when; never the text (a hard delete must leave no copy).
CREATE TABLE engram.audit (
  id       bigserial PRIMARY KEY,
  team_id  uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE,
  gid      uuid NOT NULL,
  action   text NOT NULL,
  actor    text NOT NULL,
  at       timestamptz NOT NULL DEFAULT now()
);

-- The caller's team: RLS on teams lets a role see only its own row.
CREATE FUNCTION engram.my_team() RETURNS uuid LANGUAGE sql STABLE AS
  $f$ SELECT id FROM engram.teams WHERE role_name = current_user $f$;

ALTER TABLE engram.teams ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_team ON engram.teams USING (role_name = current_user);
"""

_TEAM_TABLES = ("members", "memories", "memory_versions", "deletions", "conflicts", "audit")

RLS = "\n".join(
    f"ALTER TABLE engram.{t} ENABLE ROW LEVEL SECURITY;\n"
    f"CREATE POLICY team_rows ON engram.{t} USING (team_id = (SELECT engram.my_team()))"
    f" WITH CHECK (team_id = (SELECT engram.my_team()));"
    for t in _TEAM_TABLES) + f"""
GRANT USAGE ON SCHEMA engram TO {MEMBER_ROLE};
GRANT SELECT ON engram.schema_migrations TO {MEMBER_ROLE};
GRANT SELECT, UPDATE (clock) ON engram.teams TO {MEMBER_ROLE};
GRANT SELECT, INSERT, UPDATE, DELETE ON engram.members, engram.memories, engram.memory_versions,
  engram.deletions, engram.conflicts TO {MEMBER_ROLE};
GRANT SELECT, INSERT ON engram.audit TO {MEMBER_ROLE};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA engram TO {MEMBER_ROLE};
GRANT EXECUTE ON FUNCTION engram.my_team() TO {MEMBER_ROLE};
"""

# Per-person logins: a member role was granted its team's role, so it saw that team's
# rows (0004 replaces the grant by a `team_logins` row); dropping it revokes one person
# without rotating everyone's password. The audit records the login (`current_user`)
# beside the self-declared name.
MEMBER_ROLES = """
CREATE OR REPLACE FUNCTION engram.my_team() RETURNS uuid LANGUAGE sql STABLE AS
  $f$ SELECT id FROM engram.teams WHERE pg_has_role(current_user, role_name, 'MEMBER') $f$;
DROP POLICY own_team ON engram.teams;
CREATE POLICY own_team ON engram.teams USING (pg_has_role(current_user, role_name, 'MEMBER'));
ALTER TABLE engram.audit ADD COLUMN login name NOT NULL DEFAULT current_user;
"""

# Members must not administer the team's role (issue 27): as members *of* that role they could
# SET ROLE to it and change its password, keeping every row after `team revoke` and locking
# out the machines that joined with the team password. A personal login is now a row of
# `team_logins` (which team it belongs to) and a member of the group role that holds the
# table privileges; it is no member of the team's role, so it can neither become it nor
# alter it. Existing personal logins move over here.
LOGINS_NOT_MEMBERS = f"""
CREATE TABLE engram.team_logins (
  role_name  name PRIMARY KEY,
  team_id    uuid NOT NULL REFERENCES engram.teams(id) ON DELETE CASCADE
);
ALTER TABLE engram.team_logins ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_login ON engram.team_logins USING (role_name = current_user);
GRANT SELECT ON engram.team_logins TO {MEMBER_ROLE};

CREATE OR REPLACE FUNCTION engram.my_team() RETURNS uuid LANGUAGE sql STABLE AS
  $f$ SELECT id FROM engram.teams WHERE role_name = current_user
      UNION ALL SELECT team_id FROM engram.team_logins WHERE role_name = current_user LIMIT 1 $f$;
DROP POLICY own_team ON engram.teams;
CREATE POLICY own_team ON engram.teams USING (role_name = current_user
  OR id IN (SELECT team_id FROM engram.team_logins WHERE role_name = current_user));

DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT m.rolname AS login, t.role_name AS team_role, t.id AS team_id
             FROM engram.teams t
             JOIN pg_roles tr ON tr.rolname = t.role_name
             JOIN pg_auth_members am ON am.roleid = tr.oid
             JOIN pg_roles m ON m.oid = am.member
  LOOP
    INSERT INTO engram.team_logins(role_name, team_id) VALUES (r.login, r.team_id) ON CONFLICT DO NOTHING;
    EXECUTE format('GRANT %I TO %I', '{MEMBER_ROLE}', r.login);
    EXECUTE format('REVOKE %I FROM %I', r.team_role, r.login);
  END LOOP;
END $$;
"""

SERVER_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_team_core", CORE),
    ("0002_team_row_security", RLS),
    ("0003_team_member_logins", MEMBER_ROLES),
    ("0004_member_logins_are_not_team_role_members", LOGINS_NOT_MEMBERS),
]
