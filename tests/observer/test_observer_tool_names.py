"""Canonical tool names, shell-command classification and file path extraction."""

from __future__ import annotations

import pytest

from desktop.memory.observer.shell import classify_command
from desktop.memory.observer.tool_names import (
    CANONICAL_TOOLS,
    canonical_tool,
    classify_shell,
    file_paths_of,
    is_local_command,
    normalize_args,
    patch_files,
    relative_path,
)


@pytest.mark.parametrize(("agent", "raw", "expected"), [
    ("claude-code", "Read", "Read"), ("claude-code", "NotebookEdit", "Edit"),
    ("claude-code", "MultiEdit", "MultiEdit"), ("claude-code", "LS", "Glob"),
    ("claude-code", "Agent", "Task"), ("claude-code", "Task", "Task"),
    ("claude-code", "TodoWrite", "TodoWrite"), ("claude-code", "TaskCreate", "TodoWrite"),
    ("claude-code", "mcp__github__create_issue", "Other"), ("claude-code", "AskUserQuestion", "Other"),
    ("codex", "shell", "Bash"), ("codex", "exec_command", "Bash"), ("codex", "command_execution", "Bash"),
    ("codex", "apply_patch", "Edit"), ("codex", "web_search", "WebSearch"),
    ("codex", "update_plan", "TodoWrite"), ("codex", "mcp_tool_call", "Other"),
    ("codex", "docs__search", "Other"),
    ("gemini-cli", "read_file", "Read"), ("gemini-cli", "read_many_files", "Read"),
    ("gemini-cli", "write_file", "Write"), ("gemini-cli", "replace", "Edit"),
    ("gemini-cli", "run_shell_command", "Bash"), ("gemini-cli", "search_file_content", "Grep"),
    ("gemini-cli", "grep", "Grep"), ("gemini-cli", "glob", "Glob"),
    ("gemini-cli", "list_directory", "Glob"), ("gemini-cli", "web_fetch", "WebFetch"),
    ("gemini-cli", "google_web_search", "WebSearch"), ("gemini-cli", "save_memory", "Other"),
    ("engram", "Read", "Read"), ("gemini-cli", "something_new", "Other"),
])
def test_canonical_tool(agent: str, raw: str, expected: str) -> None:
    assert canonical_tool(agent, raw) == expected
    assert expected in CANONICAL_TOOLS


@pytest.mark.parametrize(("command", "tool", "paths"), [
    ("cat src/app.py", "Read", ("src/app.py",)),
    ("sed -n '1,120p' src/app.py", "Read", ("src/app.py",)),
    ("sed -n -e '5p' a.py b.py", "Read", ("a.py", "b.py")),
    ("head -n 50 README.md", "Read", ("README.md",)),
    ("tail -20 log.txt", "Read", ("log.txt",)),
    ("nl -ba src/x.py | sed -n '10,40p'", "Read", ("src/x.py",)),
    (["bash", "-lc", "cat a.py"], "Read", ("a.py",)),
    ("bash -lc 'cat a.py'", "Read", ("a.py",)),
    ("rg -n 'def main' src", "Grep", ("src",)),
    ("rg -n -g '*.py' TODO", "Grep", ()),
    ("grep -rn --include=*.py foo .", "Grep", (".",)),
    ("rg --files src", "Glob", ("src",)),
    ("ls -la src", "Glob", ("src",)),
    ("find . -name '*.toml'", "Glob", (".",)),
    # Anything that may change state, or whose paths are not obvious, stays Bash.
    ("sed -i 's/a/b/' x.py", "Bash", ()),
    ("sed 's/a/b/' x.py", "Bash", ()),
    ("cat a.py > b.py", "Bash", ()),
    ("cat a.py && rm a.py", "Bash", ()),
    ("cat $(ls)", "Bash", ()),
    ("cat", "Bash", ()),
    ("python -m pytest -q", "Bash", ()),
    ("find . -name '*.pyc' -delete", "Bash", ()),
    ("cat 'unterminated", "Bash", ()),
    ("cat a.py | python -", "Bash", ()),
    ("", "Bash", ()),
])
def test_classify_command(command: object, tool: str, paths: tuple[str, ...]) -> None:
    shell = classify_command(command)
    assert (shell.tool, shell.paths) == (tool, paths)


def test_classify_shell_adds_canonical_args() -> None:
    tool, args = classify_shell({"command": ["bash", "-lc", "rg -n 'class Foo' src/models.py"]})
    assert tool == "Grep"
    assert args["pattern"] == "class Foo" and args["path"] == "src/models.py"
    assert args["command"] == "rg -n 'class Foo' src/models.py"


def test_normalize_args_per_agent_spelling() -> None:
    assert normalize_args("Read", {"absolute_path": "/p/a.py"})["file_path"] == "/p/a.py"
    assert normalize_args("Grep", {"pattern": "x", "dir_path": "src"})["path"] == "src"
    assert normalize_args("Bash", {"cmd": "ls"})["command"] == "ls"
    assert normalize_args("WebSearch", {"query": "q"})["query"] == "q"
    fetch = normalize_args("WebFetch", {"prompt": "Summarize https://example.com/a?b=1 please"})
    assert fetch["url"] == "https://example.com/a?b=1"
    # Never overwrites what the agent said.
    assert normalize_args("Read", {"file_path": "a", "path": "b"})["file_path"] == "a"


def test_file_paths_of() -> None:
    cwd = "/home/dev/proj"
    assert file_paths_of("Read", {"file_path": "/home/dev/proj/src/a.py"}, cwd) == ("src/a.py",)
    assert file_paths_of("Edit", {"file_path": "/etc/hosts"}, cwd) == ("/etc/hosts",)
    assert file_paths_of("Write", {"file_path": "./src/../b.py"}, cwd) == ("b.py",)
    assert file_paths_of("Read", {"paths": ["a.py", "a.py", "/home/dev/proj/b.py"]}, cwd) == ("a.py", "b.py")
    assert file_paths_of("Grep", {"pattern": "x", "path": "/home/dev/proj/src"}, cwd) == ("src",)
    assert file_paths_of("Glob", {"pattern": "**/*.py"}, cwd) == ()
    assert file_paths_of("Bash", {"command": "make"}, cwd) == ()
    assert file_paths_of("Read", {"file_path": "x.py"}, cwd, workdir="/home/dev/proj/sub") == ("sub/x.py",)
    # A sibling folder sharing the prefix is not inside the project.
    assert file_paths_of("Read", {"file_path": "/home/dev/proj2/a.py"}, cwd) == ("/home/dev/proj2/a.py",)
    assert file_paths_of("Read", {"file_path": "/home/dev/proj"}, cwd) == (".",)


def test_windows_paths() -> None:
    assert relative_path("C:\\work\\app\\src\\a.py", "C:\\work\\app") == "src/a.py"


def test_patch_files() -> None:
    patch = ("*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: b.py\n+z\n"
             "*** Delete File: c.py\n*** Update File: d.py\n*** Move to: e.py\n*** End Patch\n")
    assert patch_files(patch) == [("update", "a.py"), ("add", "b.py"), ("delete", "c.py"),
                                  ("update", "d.py"), ("add", "e.py")]


@pytest.mark.parametrize(("prompt", "local"), [
    ("/status", True), ("/model opus", True), ("<command-name>/cost</command-name>", True),
    ("/hi is running…", False),  # a project's custom command reaches the model
    ("Execute /hi", False), ("fix the bug", False), ("/", False),
])
def test_local_commands_are_not_prompts(prompt: str, local: bool) -> None:
    assert is_local_command(prompt) is local
