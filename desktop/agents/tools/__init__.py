"""Tools of Engram's own agent: file and shell tools confined to the project, and memory tools."""
