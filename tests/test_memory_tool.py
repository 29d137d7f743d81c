"""memory_tool: Anthropic's memory commands on the trial store; traversal and symlinks are refused."""

import os

import pytest

from strategies.base import ToolError
from strategies.memory_tool import COMMANDS, MemoryTool
from tests.helpers import FakeContext


@pytest.fixture
def memory(tmp_path):
    strategy = MemoryTool()
    strategy.bind(FakeContext(10_000, store=tmp_path / "store"))
    return strategy


def call(strategy, **args):
    return strategy.call("memory", args)


def test_the_tool_has_anthropics_command_schema(memory):
    [tool] = memory.tools()
    schema = tool["function"]["parameters"]
    assert tool["function"]["name"] == "memory" and schema["properties"]["command"]["enum"] == list(COMMANDS)
    assert set(COMMANDS) == {"view", "create", "str_replace", "insert", "delete", "rename"}
    for field in (
        "path",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
        "old_path",
        "new_path",
        "view_range",
    ):
        assert field in schema["properties"]


def test_commands_edit_files_under_the_trial_store(memory, tmp_path):
    root = tmp_path / "store" / "memories"
    assert "empty" in call(memory, command="view", path="/memories")
    call(memory, command="create", path="/memories/audit/progress.md", file_text="pages read: 1\ntodo: 2, 3")
    assert (root / "audit" / "progress.md").read_text() == "pages read: 1\ntodo: 2, 3"
    call(
        memory,
        command="str_replace",
        path="/memories/audit/progress.md",
        old_str="pages read: 1",
        new_str="pages read: 1, 2",
    )
    call(memory, command="insert", path="/memories/audit/progress.md", insert_line=0, insert_text="# C000")
    assert call(memory, command="view", path="/memories/audit/progress.md") == (
        "     1\t# C000\n     2\tpages read: 1, 2\n     3\ttodo: 2, 3"
    )
    assert call(memory, command="view", path="/memories/audit/progress.md", view_range=[2, -1]).startswith("     2\t")
    assert "/memories/audit/progress.md" in call(memory, command="view", path="/memories")
    call(memory, command="rename", old_path="/memories/audit", new_path="/memories/done")
    assert (root / "done" / "progress.md").exists() and not (root / "audit").exists()
    call(memory, command="delete", path="/memories/done")
    assert list(root.iterdir()) == []
    assert [name for name, _ in memory.ctx.events] == ["memory"] * 9  # every command is a strategy event


@pytest.mark.parametrize(
    "args,needle",
    [
        ({"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "y"}, "occurs 2 times"),
        ({"command": "str_replace", "path": "/memories/a.md", "old_str": "zzz", "new_str": "y"}, "occurs 0 times"),
        ({"command": "insert", "path": "/memories/a.md", "insert_line": 9, "insert_text": "y"}, "insert_line"),
        ({"command": "view", "path": "/memories/a.md", "view_range": [3, 1]}, "view_range"),
        ({"command": "view", "path": "/memories/missing.md"}, "does not exist"),
        ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/a.md"}, "already exists"),
        ({"command": "delete", "path": "/memories"}, "cannot be deleted"),
        ({"command": "create", "path": "/memories/big.md", "file_text": "x" * 20_001}, "max 20,000"),
        ({"command": "create", "path": "/memories/a.md/b.md", "file_text": "x"}, "is a file"),
        ({"command": "shred", "path": "/memories/a.md"}, "unknown command"),
        ({"command": "create", "path": "/memories/b.md", "file_text": 3}, "must be a string"),
        ({"command": "create", "path": "/memories/" + "d/" * 9 + "x.md", "file_text": "x"}, "10 levels below"),
        ({"command": "view", "path": "/memories/" + "a" * 300}, "310 characters"),
    ],
)
def test_bad_commands_are_tool_errors(memory, args, needle):
    call(memory, command="create", path="/memories/a.md", file_text="x\nx")
    with pytest.raises(ToolError, match=needle):
        memory.call("memory", args)


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../escape.md",
        "/memories/a/../../escape.md",
        "/etc/passwd",
        "memories/a.md",
        "../memories/a.md",
        "/memories/./a.md",
        "/memories//a.md",
        "/memoriesX/a.md",
        "/",
        "",
        "/memories/a\x00.md",
        "/memories\\..\\a.md",
        None,
        7,
    ],
)
def test_path_traversal_is_refused(memory, tmp_path, path):
    for args in (
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "view", "path": path},
        {"command": "rename", "old_path": "/memories", "new_path": path},
    ):
        with pytest.raises(ToolError):
            memory.call("memory", args)
    assert not (tmp_path / "escape.md").exists() and not (tmp_path / "store" / "escape.md").exists()


def test_symlinks_are_refused_wherever_they_are(memory, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "store" / "memories"
    call(memory, command="view", path="/memories")  # creates the root
    os.symlink(outside, root / "linkdir")
    os.symlink(outside / "secret.txt", root / "linkfile.txt")
    for args in (
        {"command": "view", "path": "/memories/linkdir/secret.txt"},
        {"command": "create", "path": "/memories/linkdir/new.txt", "file_text": "x"},
        {"command": "view", "path": "/memories/linkfile.txt"},
        {"command": "str_replace", "path": "/memories/linkfile.txt", "old_str": "secret", "new_str": "gone"},
        {"command": "delete", "path": "/memories/linkdir"},
        {"command": "rename", "old_path": "/memories/linkfile.txt", "new_path": "/memories/x.txt"},
    ):
        with pytest.raises(ToolError, match="symlink"):
            memory.call("memory", args)
    assert (outside / "secret.txt").read_text() == "secret" and not (outside / "new.txt").exists()
    assert "secret" not in call(memory, command="view", path="/memories")


def test_a_symlinked_memory_root_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "store").mkdir()
    os.symlink(outside, tmp_path / "store" / "memories")
    strategy = MemoryTool()
    strategy.bind(FakeContext(10_000, store=tmp_path / "store"))
    with pytest.raises(ToolError, match="symlink"):
        call(strategy, command="create", path="/memories/a.md", file_text="x")
    assert list(outside.iterdir()) == []


def test_history_unchanged_without_a_base_and_trimmed_with_one(memory, tmp_path):
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert memory.prepare(history) == history and memory.prepare(history) is not history
    from strategies.headtail import HeadTail

    wrapped = MemoryTool(base={"_target_": "strategies.headtail.HeadTail"})
    assert isinstance(wrapped.base, HeadTail)
    assert memory.server_options() == {} and memory.server_side is None
