"""PySide6 user interface. Only this package imports Qt."""
