"""Helpers of the test suite's machinery: markers by cause, the environment of child processes."""
