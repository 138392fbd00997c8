"""What a file's name and an edit's text say about tests."""

from __future__ import annotations

import pytest

from desktop.memory.text.file_kinds import declared_tests, is_test_file
from desktop.memory.triggers.model import adds_tests


@pytest.mark.parametrize(("text", "count"), [
    ("func TestParse(t *testing.T) {\n\tt.Run(\"empty\", func(t *testing.T) {})\n}", 2),
    ("func (s *Suite) TestRun() {}", 1),
    ("def test_parse():\n    pass\n\nasync def test_fetch():\n    pass", 2),
    ("def describe_parser():\n    def it_reads_a_title():\n        pass", 1),
    ("  it('reads a title', () => {})\n  test(\"writes\", async () => {})\n  it.skip('later', f)", 3),
    ("#[test]\nfn parses() {}\n#[tokio::test]\nasync fn fetches() {}", 2),
    ("@Test\nvoid parses() {}\n[Fact]\npublic void Reads() {}", 2),
    # near misses: a helper named like a test, a call of one, a table row, prose about tests
    ("x := TestHelper(t)\nrunTest(t)\n{name: \"empty\", want: 0},\n// test that it parses", 0),
    ("func Testify() {}\ndef helper_test(): pass\ndef items(self):\n    def iterate(): pass", 0),
])
def test_test_cases_counts_declarations_in_the_common_frameworks(text: str, count: int) -> None:
    assert declared_tests(text) == count


def test_an_edit_adds_tests_only_when_it_declares_more_than_it_replaces() -> None:
    old = "def test_a():\n    assert f() == 1"
    assert adds_tests({"file_path": "t/test_a.py", "content": "def test_a():\n    pass"})
    assert not adds_tests({"file_path": "t/test_a.py", "old_string": old, "new_string": old.replace("1", "2")})
    assert adds_tests({"old_string": old, "new_string": old + "\n\ndef test_b():\n    pass"})
    assert not adds_tests({"edits": [{"old_string": old, "new_string": "def test_a2():\n    pass"}]})
    assert adds_tests({"input": "*** Begin Patch\n*** Update File: a_test.go\n@@\n+func TestB(t *testing.T) {}\n"
                                "*** End Patch"})
    assert not adds_tests({"file_path": "README.md", "content": "Run the tests with `pytest`."})


def test_test_files_by_name_and_folder() -> None:
    assert is_test_file("pkg/x_test.go") and is_test_file("specs/cli_spec.py") and is_test_file("tests/util.py")
    assert not is_test_file("pkg/testdata.go") and not is_test_file("docs/testing.md")
