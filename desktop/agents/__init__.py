"""Engram's agent runtime (plain Python, never imports Qt).

Public entry points:

* :class:`desktop.agents.session.AgentSession` with :class:`desktop.agents.session_types.SessionConfig`
  runs one memory-augmented session (``run()`` in the caller's thread, or ``start()``);
* :func:`desktop.agents.parallel.run_parallel` runs several sessions with isolated scratchpads;
* :func:`desktop.agents.providers.make_provider` builds Ollama / OpenAI-compatible / Anthropic /
  scripted providers (keys from the OS keyring);
* :mod:`desktop.agents.hooks` answers Claude Code, Codex and Gemini CLI through their hooks;
* :mod:`desktop.agents.mcp_server` serves the same memory over MCP (stdio).
"""
