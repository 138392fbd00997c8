"""The names of the observer's signal classes: plain strings, importable without the observer.

A hook answering a tool call (every call, issue 25) compares a lesson's signal with these;
``signals`` (tables, regexes, dataclasses: ~9 ms to import) re-exports them.
"""

from __future__ import annotations

# -- signal classes ------------------------------------------------------------------

FILE_ACCESS, CO_ACCESS, ERROR_RETRY, BACKTRACK = "file_access", "co_access", "error_retry", "backtrack"
READ_ABANDON, REPEATED_GREP, SEQUENCE, TIME_ANOMALY = "read_abandon", "repeated_grep", "sequence", "time_anomaly"
SELF_CORRECTION, EXTERNAL_REFERENCE, GLOB_IGNORE = "self_correction", "external_reference", "glob_ignore"
IMPORT_CHASE, TEST_ORDER, CONFIG_TOUCH, STEP_OVERRUN = "import_chase", "test_order", "config_touch", "step_overrun"
PARALLEL_CONFLICT, CONTEXT_TOKEN_SPIKE = "parallel_conflict", "context_token_spike"
# Not one of the 17 behavioural classes: the agent's own words about an abandoned
# approach (dead-end language) and an explicit record_memory call.
DEAD_END, EXPLICIT = "dead_end", "explicit"
# Issue 13's evidence kinds (observer/lessons.py): what a session shows, not what the agent muttered.
USER_RULE, COMMAND_FIX, RECIPE = "user_rule", "command_fix", "recipe"
ERROR_FIX, STATED_CAUSE, HOOK_BLOCK = "error_fix", "stated_cause", "hook_block"
# Issue 25's lessons that carry their own triggers (observer/trigger_lessons.py).
WRONG_PLACE, CHECK_RULE, CHECK_GAP = "wrong_place", "check_rule", "check_gap"
# Issue 26: what the user states, or a command's outcome shows, about the project's environment.
PROJECT_FACT = "project_fact"
# Issues 25 and 26: the user asked for tests once code had changed without them (observer/asked_tests.py).
ASKED_TESTS = "asked_tests"
# Issues 25 and 26: the user questioned the tests an agent had just written (observer/asked_tests.py).
REVIEWED_TESTS = "reviewed_tests"
#: How the review habit's stored text begins (``triggers/untested`` recognises it, to say the user's
#: newer words in its place).
REVIEWED_TESTS_LEAD = "The user reviews the tests an agent writes here: after tests were written, they asked "
# Issue 26: a call failed from a subfolder on a path from the project root (observer/shell_strays.py).
SHELL_STRAY = "shell_stray"
# Issues 25 and 26: the agent's shell tool rewrote a quoted ``!`` as ``\!`` (observer/shell_escapes.py).
SHELL_ESCAPE = "shell_escape"
# Issue 25: a program refused a flag the agent gave it (observer/rejected_flags.py).
REJECTED_FLAG = "rejected_flag"
# Issue 25: a tool refused a call, or the user declined it, and a retry with other arguments went
# through (observer/tool_arguments.py).
TOOL_ARGS = "tool_args"
# Issue 26: a type of the project's own mixed up with its plain type, in two sessions (observer/type_clashes.py).
TYPE_CLASH = "type_clash"

#: Lessons whose text gives a command to run.
COMMAND_LESSONS = frozenset({COMMAND_FIX, ERROR_FIX, RECIPE, REJECTED_FLAG})
