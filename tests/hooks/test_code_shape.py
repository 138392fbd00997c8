"""The shape of a line of code (issue 25): what a checker's caret flagged, and what an edit writes."""

from __future__ import annotations

import pytest

from desktop.memory.triggers.code_shape import flagged_shape, shape, written_shapes, written_text


@pytest.mark.parametrize(("line", "expected"), [
    ("\tcwd, _ := os.Getwd()", "w, _ = w("),  # declaring and assigning are one construct
    ("baseTree, _ = baseCommit.Tree()", "w, _ = w("),
    ("head, _ := repo.Head()  // why", "w, _ = w("),
    ("if total == None:", "w w == w:"),
    ('name := "main"', 'w = "s"'),
    ("x = 42", "w = 0"),
])
def test_names_and_literals_are_masked_and_the_call_cut(line: str, expected: str) -> None:
    assert shape(line) == expected


def test_only_a_caret_on_a_construct_gives_a_shape() -> None:
    assert flagged_shape("\t_ = f.Close()", "\t^") == "… _ = w("  # a call's last value into the blank
    assert flagged_shape("    if x == None:", "         ^^") == "w w == w:"
    assert flagged_shape("\tif err != nil {", "\t^") == ""           # on a name
    assert flagged_shape('\treturn "main"', "\t       ^") == ""       # on a literal
    assert flagged_shape("\t_ = f.Close() //nolint:errcheck", "\t^") == ""  # already the fix
    assert flagged_shape("\tfoo()", "no caret here") == ""


def test_what_each_agent_writes() -> None:
    assert written_text({"new_string": "a"}) == "a"
    assert written_text({"edits": [{"new_string": "a"}, {"new_string": "b"}]}) == "a\nb"
    patch = "*** Begin Patch\n*** Update File: a.go\n@@\n-old()\n+x, _ := f()\n+++ b/a.go\n"
    assert written_text({"input": patch}) == "x, _ := f()"
    assert written_shapes(["x, _ := f()", "", "y, _ := g() //nolint:errcheck", "w"]) == ("w, _ = w(", "… _ = w(")


def test_a_caret_after_the_first_parenthesis_gives_no_shape() -> None:
    """The shape stops at the first ``(``: a construct after it would leave a shape of any call."""
    assert flagged_shape("def f(x=[]):", "        ^^") == ""


def test_a_stored_declaration_shape_fires_on_an_assignment() -> None:
    """Lessons stored with ``:=`` (before both were one construct) match ``=`` as they are read."""
    from desktop.memory.triggers.model import CODE, Trigger, matches, shape_of

    stored = Trigger.from_json({"kind": CODE, "key": "w, _ := w("})
    assert stored is not None and stored.key == "w, _ = w("
    call = shape_of("Edit", {"file_path": "a.go", "new_string": "\tt, _ = c.Tree()\n"}, ["a.go"])
    assert matches(stored, call)


def test_a_return_of_nothing_is_one_construct_whatever_comes_before_it() -> None:
    """nilerr flags ``return nil`` under ``if err != nil {``; a later edit returning ``x, true, nil``
    there is the same mistake, and a return of a name or a value there is not."""
    from desktop.memory.triggers.code_shape import PAIR_JOIN, flagged_pair

    flagged = "\tif err != nil {\n\t\tlog(err)\n\t\treturn nil\n\t}"
    key = flagged_pair(flagged, "\t\treturn nil")
    assert key == f"w w != w {{{PAIR_JOIN}return … nil"
    assert key in written_shapes("if iterErr != nil {\n\treturn cp, true, nil // best effort\n}".splitlines())
    for other in ("if err != nil {\n\treturn nil, err\n}", "if err != nil {\n\treturn nil, nilErr\n}",
                  "if x != nil {\n\treturn x.nil\n}", "return nil"):
        assert key not in written_shapes(other.splitlines()), other
    assert f"w w == w:{PAIR_JOIN}return … None" in written_shapes(["if total == None:", "    return None"])


def test_a_calls_last_value_dropped_is_one_construct_whatever_comes_before() -> None:
    """errcheck's caret on ``_``: ``_ = f.Close()`` and ``t, _ = c.Tree()`` drop the same thing (the
    value a call returns last); ``_, err := f()`` keeps it, and ``x, _ = y`` calls nothing."""
    from desktop.memory.triggers.code_shape import BLANK_LAST

    assert flagged_shape("\t\tbaseTree, _ = baseCommit.Tree()", "\t\t          ^") == BLANK_LAST
    for line in ("_ = os.Setenv(k, v)", "t, _ = c.Tree()", "a, _, _ := f()"):
        assert BLANK_LAST in written_shapes([line]), line
    for line in ("_, err := f()", "x, _ = y", "_ = x", "for _, x := range xs {"):
        assert BLANK_LAST not in written_shapes([line]), line


def test_a_comment_is_dropped_whatever_quotes_it_holds_and_a_string_is_no_comment() -> None:
    """``return nil, nil // Branch doesn't exist`` is a return of nothing: the apostrophe in the
    comment does not make it code. ``"http://x"`` holds no comment."""
    from desktop.memory.triggers.code_shape import PAIR_JOIN, without_comment

    assert without_comment("\t\treturn nil, nil // Branch doesn't exist, return empty") == "\t\treturn nil, nil"
    assert without_comment('\tu := "http://example.com" // it\'s the "base"') == '\tu := "http://example.com"'
    assert without_comment('\tu := "http://example.com"') == '\tu := "http://example.com"'
    text = "\tif err != nil {\n\t\treturn nil, nil // Branch doesn't exist, return empty (not an error)\n\t}"
    assert f"w w != w {{{PAIR_JOIN}return … nil" in written_shapes(text.splitlines())


def test_a_caret_on_a_qualified_call_flags_that_call() -> None:
    """noctx's caret on ``exec.Command``'s ``(``, usetesting's on ``os.Chdir``: the construct is the
    call of that API, not the assignment around it; a builtin's bare name is every call of it."""
    from desktop.memory.triggers.code_shape import written_calls

    assert flagged_shape('\tcmd := exec.Command("git", "status")', "\t              ^") == ""  # on the name's middle
    assert flagged_shape('\tcmd := exec.Command("git", "status")', "\t                   ^") == "call exec.Command("
    assert flagged_shape("\tif err := os.Chdir(dir); err != nil {", "\t          ^") == "call os.Chdir("
    assert flagged_shape("\tx.ids = append(ids, id)", "\t        ^") == ""
    # a call returned as it came is about the return (wrapcheck), not every call of it
    assert flagged_shape("\treturn settings.Load()", "\t       ^") == ""
    # what an edit writes: the calls it adds, not those it carries along as context
    old = '\tcmd := exec.Command("git", "a")'
    assert written_calls(old + '\n\tout := exec.Command("git", "b")', [old]) == ("call exec.Command(",)
    assert written_calls(old + "\n\tx := 1", [old]) == ()
    assert written_calls('\tc := exec.CommandContext(ctx, "git")\n\ts := "exec.Command(x)"', []) == \
        ("call exec.CommandContext(",)
    assert written_calls("\tmyexec.Command(a)\n\t// exec.Command(b)", []) == ("call myexec.Command(",)


def test_a_line_too_long_to_be_written_by_hand_is_not_read_for_calls() -> None:
    """A generated or minified line (a hostile repository's megabyte of one line) is not scanned: a
    hook reading it would spend its budget there."""
    from desktop.memory.triggers.code_shape import MAX_CALL_LINE, written_calls

    assert written_calls(" " * MAX_CALL_LINE + "exec.Command(x)") == ()
    assert written_calls(" " * 10 + "exec.Command(x)") == ("call exec.Command(",)


def test_a_flagged_call_is_read_from_each_agents_edit() -> None:
    """Claude Code's and Gemini CLI's ``new_string``, a written file's ``content``, Codex's patch."""
    from desktop.memory.triggers.model import CODE, Trigger, matches, shape_of

    call = Trigger(CODE, "call exec.Command(", tokens=(".go",))
    patch = "*** Begin Patch\n*** Update File: a.go\n@@\n-x := 1\n+c := exec.Command(\"git\")\n*** End Patch\n"
    for args in ({"new_string": 'c := exec.Command("git")', "old_string": "x := 1"},
                 {"content": 'package a\n\nvar c = exec.Command("git")\n'}, {"input": patch}):
        assert matches(call, shape_of("Edit", args, ["a.go"])), args
    context = {"input": "*** Begin Patch\n*** Update File: a.go\n@@\n c := exec.Command(\"git\")\n+x := 1\n"}
    assert not matches(call, shape_of("Edit", context, ["a.go"]))  # a context line of the patch
