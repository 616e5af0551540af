"""Helpers shared by the test suite (no tests here)."""
