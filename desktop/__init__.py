"""Engram: long-term memory of a codebase for AI coding agents."""

APP_NAME = "Engram"
APP_ID = "engram"
ORG_NAME = "Engram"
__version__ = "0.1.0"
