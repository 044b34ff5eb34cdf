"""Helpers shared by the tests (on pytest's pythonpath: `from helpers.plan import Block`)."""
